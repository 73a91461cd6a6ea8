package postgresadapter

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

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
// \\":S3cr3t-PgPw\\" after host"); no verb's error may show it.
func TestParseErrorHidesPassword(t *testing.T) {
	const pw = "S3cr3t-PgPw/9"
	for _, raw := range []string{
		"postgres://postgres:" + pw + "@127.0.0.1:5432/postgres",
		"postgres://postgres:S3cr3t-PgPw#9@127.0.0.1:5432/postgres",
		"postgres://postgres:S3cr3t-PgPw?9@127.0.0.1:5432/postgres",
		"postgres://postgres:" + pw + "@[::1",
	} {
		if _, err := parseAdminURL(raw); err == nil || leakedPiece(err.Error(), pw) != "" {
			t.Errorf("parseAdminURL(%q) = %v; want an error without a piece of the password", raw, err)
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

// FuzzAdminSecrets: whatever surrounds a password in an admin_url, and
// however the URL fails to parse, no error of the adapter's parse path
// (parseAdminURL, and Resolve, which parses the URL, the config and the
// slice and connects to nothing without owner_role) shows a piece of the
// password of sdk.MinScrub bytes.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("postgres", "S3cr3t-PgPw/9", "127.0.0.1:5432", "/postgres")
	f.Add("u", "p@ss#word", "h", "/db?sslmode=require")
	f.Add("u", "pw pw pw", "[::1", "")
	f.Add("u", "p%zzword", "h:5432", "/d")
	f.Add("u", "secret", "h", "/d?password=secret2")
	f.Add("u:v", "abc:def", "h:port", "/")
	f.Fuzz(func(t *testing.T, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := "postgres://" + user + ":" + pw + "@" + host + rest
		if _, err := parseAdminURL(raw); err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseAdminURL(%q): error %q shows %q", raw, err, p)
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

// checkRoundTrip resolves a slice on raw without owner_role (no
// connection needed) and checks that the address parses back through
// parseAdminURL and pgx to the same server and user and the slice's
// database.
func checkRoundTrip(t *testing.T, raw string) {
	t.Helper()
	a := New()
	defer a.Close()
	res, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
	if err != nil {
		return
	}
	if _, err := parseAdminURL(res.Address); err != nil {
		t.Fatalf("admin %q: address %q does not parse back: %v", raw, res.Address, err)
	}
	u, err := url.Parse(res.Address)
	if err != nil || u.Path != "/acme_main" {
		t.Fatalf("admin %q: address %q: url.Parse path %v, %v; want /acme_main", raw, res.Address, u, err)
	}
	in, err := pgconn.ParseConfig(raw)
	if err != nil {
		return // server() refuses it too, with pgxpool's message
	}
	out, err := pgconn.ParseConfig(res.Address)
	if err != nil {
		t.Fatalf("admin %q: pgx refuses address %q: %v", raw, res.Address, err)
	}
	if out.Database != "acme_main" || out.Host != in.Host || out.Port != in.Port || out.User != in.User || out.Password != in.Password {
		t.Fatalf("admin %q: address %q reads as %s@%s:%d/%s; want %s@%s:%d/acme_main",
			raw, res.Address, out.User, out.Host, out.Port, out.Database, in.User, in.Host, in.Port)
	}
}
