package logview

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/redact"
)

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.log")
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d token=s3cret-value\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	red := redact.New("s3cret-value")
	for _, tc := range []struct {
		name      string
		q         Query
		want      []string
		truncated bool
	}{
		{"last 2", Query{Lines: 2}, []string{"line 19 token=***", "line 20 token=***"}, true},
		{"all", Query{Lines: 50}, nil, false},
		{"grep", Query{Lines: 5, Grep: regexp.MustCompile(`^line 1[0-2] `)}, []string{"line 10 token=***", "line 11 token=***", "line 12 token=***"}, false},
		{"grep cannot find the secret", Query{Grep: regexp.MustCompile(`s3cret`)}, []string{}, false},
		{"bytes", Query{Lines: 10, MaxBytes: 30}, []string{"line 20 token=***"}, true},
	} {
		got, truncated, err := Tail(path, red, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == nil {
			if len(got) != 20 || truncated {
				t.Errorf("%s: got %d lines, truncated %v; want 20, false", tc.name, len(got), truncated)
			}
			continue
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || truncated != tc.truncated {
			t.Errorf("%s: got %q truncated %v; want %q truncated %v", tc.name, got, truncated, tc.want, tc.truncated)
		}
	}
	if got, _, err := Tail(filepath.Join(t.TempDir(), "none.log"), red, Query{Lines: 5}); err != nil || len(got) != 0 {
		t.Errorf("missing log: %q %v; want nothing, no error", got, err)
	}
}

// pemKey is a PEM-shaped key of lines body lines (64 base64 characters of
// deterministic bytes each, the last shorter): no key material is kept in
// the repository, and the redactor sees the same shape.
func pemKey(lines int) string {
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	der := make([]byte, lines*48-20)
	for i := range der {
		der[i] = byte(rng.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(der)
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for i := 0; i < len(enc); i += 64 {
		b.WriteString(enc[i:min(i+64, len(enc))] + "\n")
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return b.String()
}

// TestTailPEM: a tail that begins inside a PEM key the service printed
// (the MCP logs tool, `binky status`) shows no piece of it, whether the
// key began within the lines read before the tail (one mask) or long
// before (each line masked); with grep and a byte bound too.
func TestTailPEM(t *testing.T) {
	for _, keyLines := range []int{25, 200} {
		key := pemKey(keyLines)
		body := strings.Split(key, "\n")
		body = body[1 : len(body)-1]
		path := filepath.Join(t.TempDir(), "svc.log")
		log := "starting\nloaded TLS key:\n" + key + "\nfatal: key rejected\n"
		if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
			t.Fatal(err)
		}
		red := redact.New(key)
		for _, q := range []Query{
			{Lines: 1}, {Lines: 2}, {Lines: 3}, {Lines: 5}, {Lines: 30}, {Lines: 500},
			{Lines: 5, MaxBytes: 100},
			{Grep: regexp.MustCompile(`[A-Z]{3}`)},
		} {
			got, _, err := Tail(path, red, q)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(got, "\n")
			for _, l := range body {
				for i := 0; i+redact.MinLen <= len(l); i++ {
					if g := l[i : i+redact.MinLen]; strings.Contains(text, g) && !strings.Contains("starting loaded TLS key: fatal: key rejected", g) {
						t.Fatalf("key of %d lines, %+v: tail shows %q of the key:\n%s", keyLines, q, g, text)
					}
				}
			}
			if q.Grep == nil && !strings.HasSuffix(text, "fatal: key rejected") {
				t.Errorf("key of %d lines, %+v: tail %q lacks the service's last line", keyLines, q, text)
			}
		}
		// A tail that begins far inside a long key still keeps the armour.
		if keyLines == 200 {
			got, _, _ := Tail(path, red, Query{Lines: 4})
			if want := []string{"***", "***", "-----END RSA PRIVATE KEY-----", "fatal: key rejected"}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("last 4 lines inside a long key: %q; want %q", got, want)
			}
		} else {
			got, _, _ := Tail(path, red, Query{Lines: 3})
			if want := []string{"loaded TLS key:", "***", "fatal: key rejected"}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("last 3 lines inside a short key: %q; want %q", got, want)
			}
		}
	}
}
