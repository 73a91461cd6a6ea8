package kafkaadapter

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // the cluster's url(); "" for an error
	}{
		{"kafka://127.0.0.1:9092", "kafka://127.0.0.1:9092"},
		{"redpanda://a:1,b:2", "kafka://a:1,b:2"},
		{"kafka://u:p%2Fw@h:9092?sasl=scram-sha-512&tls=true", "kafka://u:p%2Fw@h:9092?sasl=scram-sha-512&tls=true"},
		{"kafka://h", ""},
		{"kafka://h:9092/topic", ""},
		{"kafka://h:9092?sasl=plain", ""},
		{"kafka://h:9092?acks=all", ""},
		{"http://h:9092", ""},
		{"", ""},
	} {
		c, err := parseURL(tc.raw)
		if tc.want == "" {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Errorf("parseURL(%q) = %+v, %v; want an invalid error", tc.raw, c, err)
			}
			continue
		}
		if err != nil || c.url() != tc.want {
			t.Errorf("parseURL(%q) = %v, %v; want %s", tc.raw, c, err, tc.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	n := json.Number("4")
	s, err := parseConfig(map[string]any{KeyTopics: []any{"b", "a", "b"}, KeyPartitions: n, KeyReplication: float64(-1), KeyACLs: false})
	if err != nil || !slices.Equal(s.topics, []string{"a", "b"}) || s.partitions != 4 || s.replication != -1 {
		t.Errorf("parseConfig = %+v, %v", s, err)
	}
	for _, bad := range []map[string]any{
		{KeyTopics: "orders"},
		{KeyTopics: []any{"a/b"}},
		{KeyTopics: []any{strings.Repeat("t", 186)}},
		{KeyTopics: []any{".."}},
		{KeyPartitions: float64(0)},
		{KeyPartitions: 1.5},
		{KeyReplication: float64(0)},
		{KeyACLs: true},
		{"prefix": "x"},
	} {
		if _, err := parseConfig(bad); sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("parseConfig(%v) = %v; want an invalid error", bad, err)
		}
	}
}

// TestPrefixes: every slice maps to a prefix whose longest topic fits
// Kafka's 249 characters, and one slice's prefix never starts another's.
func TestPrefixes(t *testing.T) {
	long := names.Slice("acme", names.Worktree(strings.Repeat("feature/very-long-branch-", 8)))
	slices := []string{"acme_main", "acme_main_x", "acme_mainx", long}
	for _, a := range slices {
		p := names.KafkaPrefix(a)
		if len(p)+maxTopic-64 > maxTopic || !strings.HasSuffix(p, ".") {
			t.Errorf("prefix %q of %q leaves too little room or lacks the '.'", p, a)
		}
		for _, b := range slices {
			if a != b && strings.HasPrefix(names.KafkaPrefix(b)+"t", p) {
				t.Errorf("prefix %q of %q starts %q's topics", p, a, b)
			}
		}
	}
}

// FuzzAdminSecrets: whatever surrounds a password in an admin_url, and
// however it fails to parse, no error of the parse path (parseURL, and
// Resolve, which connects to nothing) shows a piece of it of sdk.MinScrub
// bytes; whatever resolve answers parses back through parseURL to the same
// brokers and credentials, with the slice's prefix.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("kafka://", "u", "S3cr3t-KfPw/9", "127.0.0.1:9092", "")
	f.Add("kafka://", "u", "p@ss#word", "h:1,h2:2", "?sasl=scram-sha-256")
	f.Add("redpanda://", "u", "pw pw pw", "[::1", "")
	f.Add("kafka://", "u", "p%zzword", "h:9092", "?tls=true")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := scheme + user + ":" + pw + "@" + host + rest
		in, err := parseURL(raw)
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseURL(%q): error %q shows %q", raw, err, p)
			}
		}
		a := New()
		defer a.Close()
		r, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("resolve with %q: error %q shows %q", raw, err, p)
			}
			return
		}
		back, err := parseURL(r.Address)
		if err != nil {
			t.Fatalf("admin %q: address %q does not parse back: %v", raw, r.Address, err)
		}
		if !slices.Equal(back.brokers, in.brokers) || back.user != in.user || back.pass != in.pass || back.sasl != in.sasl || back.tls != in.tls || r.Values["prefix"] != "acme-main." ||
			r.Values["user"] != in.user || r.Values["password"] != in.pass || !slices.Contains(r.Secret, "password") {
			t.Fatalf("admin %q: address %q reads as %+v, values %v", raw, r.Address, back, r.Values)
		}
	})
}

// leakedPiece returns a piece of pw of sdk.MinScrub bytes that msg still
// holds outside its masks, or "". A piece holding 'x' is not looked for:
// next to a mask (xxxxx) it may be the mask's own letters.
func leakedPiece(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			p := pw[i : i+sdk.MinScrub]
			if !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
