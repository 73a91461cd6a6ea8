package mysqladapter

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/binkyhq/binky/sdk"
)

func TestQuoteIdent(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{"p_main", "`p_main`", false},
		{"we`ird", "`we``ird`", false},
		{"``", "``````", false},
		{"ÄÖ spaced", "`ÄÖ spaced`", false},
		{"x; DROP DATABASE y", "`x; DROP DATABASE y`", false},
		{strings.Repeat("é", 64), "`" + strings.Repeat("é", 64) + "`", false},
		{"", "", true},
		{strings.Repeat("a", 65), "", true},
		{"trailing ", "", true},
		{"nul\x00", "", true},
		{"bad\xffutf8", "", true},
		{"emoji😀", "", true},
	} {
		got, err := quoteIdent(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("quoteIdent(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// FuzzQuoteIdent: a quoted name is wrapped in backticks, holds only
// doubled backticks inside, and unquotes back to the input.
func FuzzQuoteIdent(f *testing.F) {
	for _, s := range []string{"p_main", "we`ird", "`", "a``b", "ÄÖ", "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q, err := quoteIdent(name)
		if err != nil {
			if checkIdent(name) == nil {
				t.Fatalf("quoteIdent refused %q but checkIdent accepts it", name)
			}
			return
		}
		if len(q) < 3 || q[0] != '`' || q[len(q)-1] != '`' {
			t.Fatalf("quoteIdent(%q) = %q; want it wrapped in backticks", name, q)
		}
		inner := q[1 : len(q)-1]
		if strings.Count(inner, "`")%2 != 0 || strings.Contains(strings.ReplaceAll(inner, "``", ""), "`") {
			t.Fatalf("quoteIdent(%q) = %q holds a lone backtick", name, q)
		}
		if back := strings.ReplaceAll(inner, "``", "`"); back != name {
			t.Fatalf("quoteIdent(%q) unquotes to %q", name, back)
		}
		if !utf8.ValidString(q) {
			t.Fatalf("quoteIdent(%q) = %q is not UTF-8", name, q)
		}
	})
}

func TestParseAdmin(t *testing.T) {
	for _, tc := range []struct {
		raw            string
		net, addr      string
		user, pw       string
		url, dsnPrefix string
	}{
		{"mysql://root@127.0.0.1:3306/", "tcp", "127.0.0.1:3306", "root", "",
			"mysql://root@127.0.0.1:3306/p_main", "root@tcp(127.0.0.1:3306)/p_main"},
		{"mariadb://app:p%40ss@db.local/?tls=false", "tcp", "db.local:3306", "app", "p@ss",
			"mariadb://app:p%40ss@db.local/p_main?tls=false", "app:p@ss@tcp(db.local:3306)/p_main"},
		{"mysql://root@/?socket=/run/mysqld/mysqld.sock", "unix", "/run/mysqld/mysqld.sock", "root", "",
			"mysql://root@/p_main?socket=/run/mysqld/mysqld.sock", "root@unix(/run/mysqld/mysqld.sock)/p_main"},
		{"root:pw@tcp(127.0.0.1:3307)/", "tcp", "127.0.0.1:3307", "root", "pw",
			"mysql://root:pw@127.0.0.1:3307/p_main", "root:pw@tcp(127.0.0.1:3307)/p_main"},
		{"mysql://[::1]:3306/", "tcp", "[::1]:3306", "", "",
			"mysql://[::1]:3306/p_main", "tcp([::1]:3306)/p_main"},
	} {
		a, err := parseAdmin(tc.raw)
		if err != nil {
			t.Errorf("parseAdmin(%q): %v", tc.raw, err)
			continue
		}
		if a.cfg.Net != tc.net || a.cfg.Addr != tc.addr || a.cfg.User != tc.user || a.cfg.Passwd != tc.pw {
			t.Errorf("parseAdmin(%q) = %s %s %s %s; want %s %s %s %s", tc.raw, a.cfg.Net, a.cfg.Addr, a.cfg.User, a.cfg.Passwd, tc.net, tc.addr, tc.user, tc.pw)
		}
		if got := a.sliceURL("p_main"); got != tc.url {
			t.Errorf("sliceURL for %q = %q; want %q", tc.raw, got, tc.url)
		}
		if got := a.sliceDSN("p_main"); !strings.HasPrefix(got, tc.dsnPrefix) {
			t.Errorf("sliceDSN for %q = %q; want it to start %q", tc.raw, got, tc.dsnPrefix)
		}
	}
	for _, bad := range []string{"", "postgres://h/", "mysql://root@h/?socket=/x", "mysql:///", "mysql:opaque", "nodsn"} {
		if _, err := parseAdmin(bad); sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("parseAdmin(%q) error %v; want code invalid", bad, err)
		}
	}
}

// FuzzParseAdmin: an admin_url is refused with code invalid, or yields a
// slice URL and DSN that parse back to the slice's database, and the
// address and DSN Resolve answers round-trip through parseAdmin and the
// driver to the same server and credentials (testdata holds "([0]:)/",
// once accepted with a slice URL that did not parse).
func FuzzParseAdmin(f *testing.F) {
	for _, s := range []string{
		"mysql://root@127.0.0.1:3306/",
		"mariadb://u:p%40ss@h/?tls=skip-verify",
		"mysql://root@/?socket=/tmp/s",
		"root@tcp(127.0.0.1:3306)/",
		"u:pw@unix(/tmp/s)/db?parseTime=true",
		"mysql://u:pw@[::1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := parseAdmin(raw)
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid", sdk.CodeOf(err))
			}
			return
		}
		u, err := url.Parse(a.sliceURL("p_main"))
		if err != nil || u.Path != "/p_main" {
			t.Fatalf("slice URL %q: path %v, %v; want /p_main", a.sliceURL("p_main"), u, err)
		}
		checkRoundTrip(t, raw, a)
	})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want config
		bad  bool
	}{
		{nil, config{}, false},
		{map[string]any{KeyCharset: "utf8mb4", KeyCollation: "utf8mb4_bin"}, config{charset: "utf8mb4", collation: "utf8mb4_bin"}, false},
		{map[string]any{KeyScheme: "Mysql2"}, config{scheme: "mysql2"}, false},
		{map[string]any{KeyScheme: "mysql+pymysql"}, config{scheme: "mysql+pymysql"}, false},
		{map[string]any{KeyScheme: "mysql2://"}, config{}, true},
		{map[string]any{KeyScheme: "2mysql"}, config{}, true},
		{map[string]any{KeyScheme: ""}, config{}, true},
		{map[string]any{KeyScheme: "my sql"}, config{}, true},
		{map[string]any{KeyScheme: true}, config{}, true},
		{map[string]any{KeyCharset: "utf8mb4 COLLATE x"}, config{}, true},
		{map[string]any{KeyCharset: 8}, config{}, true},
		{map[string]any{"owner_role": true}, config{}, true},
	} {
		got, err := parseConfig(tc.cfg)
		if tc.bad {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Errorf("parseConfig(%v) error %v; want code invalid", tc.cfg, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseConfig(%v) = %+v, %v; want %+v", tc.cfg, got, err, tc.want)
		}
	}
}

func TestGenerated(t *testing.T) {
	for extra, want := range map[string]bool{
		"":                              false,
		"auto_increment":                false,
		"DEFAULT_GENERATED":             false,
		"VIRTUAL GENERATED":             true,
		"STORED GENERATED":              true,
		"PERSISTENT":                    true,
		"on update current_timestamp()": false,
	} {
		if got := generated(extra); got != want {
			t.Errorf("generated(%q) = %v; want %v", extra, got, want)
		}
	}
}
