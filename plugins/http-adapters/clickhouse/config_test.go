package clickhouse

import (
	"net/url"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

func httpFail(err error) error { return httpx.Fail("op", "", err, hints) }

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"a_b": "`a_b`", "a`b": "`a\\`b`", `a\b`: "`a\\\\b`", "a\x00": "`a\\0`"} {
		if got := quoteIdent(in); got != want {
			t.Errorf("quoteIdent(%q) = %s; want %s", in, got, want)
		}
	}
	if got := quoteString("it's"); got != `'it\'s'` {
		t.Errorf("quoteString = %s", got)
	}
}

func TestParseConfig(t *testing.T) {
	for _, ok := range []map[string]any{nil, {KeyEngine: "Atomic"}, {KeyEngine: "Lazy(60)"}} {
		if _, err := parseConfig(ok); err != nil {
			t.Errorf("parseConfig(%v): %v", ok, err)
		}
	}
	for _, bad := range []map[string]any{{KeyEngine: 1}, {KeyEngine: "Atomic; DROP"}, {KeyEngine: "Lazy('x')"}, {"database": "x"}} {
		if _, err := parseConfig(bad); sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("parseConfig(%v): %v; want code invalid", bad, err)
		}
	}
}

func TestSliceURL(t *testing.T) {
	got := sliceURL("http://u:p%40ss@127.0.0.1:8123/?max_execution_time=5&database=old", "acme_main")
	want := "http://u:p%40ss@127.0.0.1:8123/?database=acme_main&max_execution_time=5"
	if got != want {
		t.Errorf("sliceURL = %s; want %s", got, want)
	}
}

// FuzzAdminURL: an admin_url and config either fail with code invalid and
// no piece of the password of sdk.MinScrub bytes, or the address resolve
// answers parses back through the adapter's own parser to the same server,
// credentials, settings and the slice's database.
func FuzzAdminURL(f *testing.F) {
	f.Add("http://", "default", "S3cr3t/9", "127.0.0.1:8123", "/", "Atomic")
	f.Add("https://", "u", "p@ss#word", "ch.example", "/?max_execution_time=5", "")
	f.Add("http://", "u", "p%zzword", "[::1]:8123", "", "Lazy(60)")
	f.Add("http://", "u", "secret", "h", "/?password=secret2&database=x", "x;y")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest, engine string) {
		raw := scheme + user + ":" + pw + "@" + host + rest
		var cfg map[string]any
		if engine != "" {
			cfg = map[string]any{KeyEngine: engine}
		}
		s, err := target(&sdk.Target{Slice: "acme_main", AdminURL: raw, Config: cfg})
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid (%v)", sdk.CodeOf(err), err)
			}
			msg := httpx.Fail("provision clickhouse slice \"acme_main\"", raw, err, hints).Error()
			for _, p := range append(sdk.AdminPasswords(raw), pw) {
				if len(p) >= sdk.MinScrub {
					if q := leaked(msg, p); q != "" {
						t.Fatalf("error %q shows %q of the password", msg, q)
					}
				}
			}
			return
		}
		out := sliceURL(raw, s.db)
		back, err := httpx.ParseAdminURL(out, example)
		if err != nil {
			t.Fatalf("address %q does not parse back: %v", out, err)
		}
		if back.Base.String() != s.ep.Base.String() || back.User != s.ep.User || back.Password != s.ep.Password || back.Query.Get("database") != "acme_main" {
			t.Fatalf("address %q reads back as %s user %q; want %s user %q database acme_main", out, back.Base, back.User, s.ep.Base, s.ep.User)
		}
		for k, v := range s.ep.Query {
			if k != "database" && strings.Join(back.Query[k], ",") != strings.Join(v, ",") {
				t.Fatalf("address %q lost setting %s", out, k)
			}
		}
		if _, err := url.Parse(out); err != nil {
			t.Fatal(err)
		}
	})
}

// leaked returns a piece of pw of sdk.MinScrub bytes that msg holds
// outside its masks, or "". Pieces holding 'x' are skipped: next to a
// mask they may be its own letters.
func leaked(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			if p := pw[i : i+sdk.MinScrub]; !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
