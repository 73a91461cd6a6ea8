package postgresadapter

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		json    string
		want    config
		invalid bool
	}{
		{`{}`, config{strategy: StrategyAuto}, false},
		{`null`, config{strategy: StrategyAuto}, false},
		{`{"owner_role": true}`, config{ownerRole: true, strategy: StrategyAuto}, false},
		{`{"owner_role": false, "clone_strategy": "file_copy"}`, config{strategy: StrategyFileCopy}, false},
		{`{"clone_strategy": "wal_log"}`, config{strategy: StrategyWALLog}, false},
		{`{"owner_role": "true"}`, config{}, true},
		{`{"owner_role": 1}`, config{}, true},
		{`{"clone_strategy": "fast"}`, config{}, true},
		{`{"owner": true}`, config{}, true},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(tc.json), &m); err != nil {
			t.Fatal(err)
		}
		got, err := parseConfig(m)
		if tc.invalid {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Errorf("parseConfig(%s) error %v; want code invalid", tc.json, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseConfig(%s) = %+v, %v; want %+v", tc.json, got, err, tc.want)
		}
	}
}

func TestSliceURL(t *testing.T) {
	for _, tc := range []struct {
		admin string
		user  *url.Userinfo
		want  string
	}{
		{"postgres://postgres@127.0.0.1:5432/postgres", nil, "postgres://postgres@127.0.0.1:5432/p_main"},
		{"postgresql://u:p%40ss@db:6543/admin?sslmode=disable&dbname=x", nil, "postgresql://u:p%40ss@db:6543/p_main?sslmode=disable"},
		{"postgres://postgres@127.0.0.1/?user=admin&password=x", url.UserPassword("p_main", "abc"), "postgres://p_main:abc@127.0.0.1/p_main"},
		{"postgres:///postgres?host=/var/run/postgresql", nil, "postgres:///p_main?host=/var/run/postgresql"},
	} {
		u, err := parseAdminURL(tc.admin)
		if err != nil {
			t.Fatalf("parseAdminURL(%q): %v", tc.admin, err)
		}
		if got := sliceURL(u, "p_main", tc.user); got != tc.want {
			t.Errorf("sliceURL(%q) = %q; want %q", tc.admin, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	msg := scrub("failed: p@ss/w and p%40ss%2Fw and other", "postgres://admin:p%40ss%2Fw@h/db?password=other")
	for _, leak := range []string{"p@ss/w", "p%40ss%2Fw", "other"} {
		if strings.Contains(msg, leak) {
			t.Errorf("scrub left %q in %q", leak, msg)
		}
	}
}

// FuzzParseAdminURL: any admin_url either is refused with code invalid, or
// yields a slice URL that parses back with the slice's database, and the
// address Resolve answers round-trips through the adapter's own parsers
// (parseAdminURL and pgx's) to the same server and the slice's database.
func FuzzParseAdminURL(f *testing.F) {
	for _, s := range []string{
		"postgres://postgres@127.0.0.1:5432/postgres",
		"postgresql://u:secret@h:1/d?sslmode=require",
		"postgres:///postgres?host=/run/postgresql",
		"postgres://u:pw@[::1",
		"mysql://root@h/",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := parseAdminURL(raw)
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid", sdk.CodeOf(err))
			}
			return
		}
		out := sliceURL(u, "p_main", nil)
		back, err := url.Parse(out)
		if err != nil {
			t.Fatalf("slice URL %q does not parse: %v", out, err)
		}
		if back.Path != "/p_main" {
			t.Fatalf("slice URL %q has path %q; want /p_main", out, back.Path)
		}
		checkRoundTrip(t, raw)
	})
}
