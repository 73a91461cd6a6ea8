package mysqladapter

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/binkyhq/binky/sdk"
)

// leakedPiece returns a piece of pw of sdk.MinScrub bytes that msg still
// holds outside its masks, or "". Every longer piece holds one of
// MinScrub bytes, so this checks them all. A piece holding 'x' is not
// looked for: next to a mask (xxxxx) it may be the mask's own letters.
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

// TestParseErrorHidesPassword: a password holding '/' (or '#', '?')
// written unescaped makes net/url quote a piece of it ("invalid port
// \":S3cr3t-MyPw\" after host"); no verb's error may show it, in URL or
// DSN form.
func TestParseErrorHidesPassword(t *testing.T) {
	const pw = "S3cr3t-MyPw/9"
	for _, raw := range []string{
		"mysql://root:" + pw + "@127.0.0.1:3306/",
		"mysql://root:S3cr3t-MyPw#9@127.0.0.1:3306/",
		"mariadb://root:S3cr3t-MyPw?9@127.0.0.1:3306/",
		"mysql://root:" + pw + "@[::1",
		"root:" + pw + "@tcp(127.0.0.1:3306",
		"root:" + pw + "@tcp(127.0.0.1:3306)/?parseTime=S3cr3t-MyPw",
	} {
		if _, err := parseAdmin(raw); err == nil || leakedPiece(err.Error(), pw) != "" {
			t.Errorf("parseAdmin(%q) = %v; want an error without a piece of the password", raw, err)
		}
		_, err := New().Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
		if err == nil {
			t.Errorf("resolve with %q succeeded; want an error", raw)
			continue
		}
		if p := leakedPiece(err.Error(), pw); p != "" {
			t.Errorf("resolve with %q: error %q shows %q of the password", raw, err, p)
		}
		if sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("resolve with %q: code %q; want invalid", raw, sdk.CodeOf(err))
		}
	}
}

// FuzzAdminSecrets: whatever surrounds a password in an admin_url (a
// mysql:// URL or a DSN), and however it fails to parse, no error of the
// adapter's parse path (parseAdmin, and Resolve, which connects to
// nothing) shows a piece of the password of sdk.MinScrub bytes.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("mysql://", "root", "S3cr3t-MyPw/9", "127.0.0.1:3306", "/")
	f.Add("", "root", "S3cr3t-MyPw/9", "tcp(127.0.0.1:3306", "")
	f.Add("", "root", "pw#pw#pw", "tcp(h:3306)", "/?parseTime=pw#pw")
	f.Add("mariadb://", "u", "p%zzword", "h", "/?socket=/x")
	f.Add("mysql://", "u:v", "abc:def", "[::1", "")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := scheme + user + ":" + pw + "@" + host + rest
		if _, err := parseAdmin(raw); err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseAdmin(%q): error %q shows %q", raw, err, p)
			}
		}
		a := New()
		defer a.Close()
		_, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("resolve with %q: error %q shows %q", raw, err, p)
			}
		}
	})
}

// checkRoundTrip resolves a slice on raw (no connection needed) and checks
// that the address parses back through net/url and parseAdmin, and the
// DSN through the driver, to a's server and credentials and the slice's
// database.
func checkRoundTrip(t *testing.T, raw string, a *admin) {
	t.Helper()
	m := New()
	defer m.Close()
	res, err := m.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
	if err != nil {
		t.Fatalf("admin %q parses but resolve fails: %v", raw, err)
	}
	if u, err := url.Parse(res.Address); err != nil || u.Path != "/acme_main" {
		t.Fatalf("admin %q: address %q: url.Parse path %v, %v; want /acme_main", raw, res.Address, u, err)
	}
	back, err := parseAdmin(res.Address)
	if err != nil {
		t.Fatalf("admin %q: address %q does not parse back: %v", raw, res.Address, err)
	}
	same := func(c *mysql.Config) bool {
		return c.Net == a.cfg.Net && c.Addr == a.cfg.Addr && c.User == a.cfg.User && c.Passwd == a.cfg.Passwd
	}
	if !same(back.cfg) {
		t.Fatalf("admin %q (%s %s user %q): address %q reads back as %s %s user %q", raw, a.cfg.Net, a.cfg.Addr, a.cfg.User, res.Address, back.cfg.Net, back.cfg.Addr, back.cfg.User)
	}
	dsn, err := mysql.ParseDSN(res.Values["dsn"])
	if err != nil || dsn.DBName != "acme_main" || !same(dsn) {
		t.Fatalf("admin %q: dsn %q reads back as %+v, %v", raw, res.Values["dsn"], dsn, err)
	}
}
