package redisadapter

import (
	"context"
	"net/url"
	"strings"
	"testing"

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

// noACL is the config under which Resolve connects to nothing.
var noACL = map[string]any{KeyACL: false}

// TestParseErrorHidesPassword: a password holding '/' (or '#', '?')
// written unescaped makes net/url quote a piece of it ("invalid port
// \":S3cr3t-RdPw\" after host"); no verb's error may show it.
func TestParseErrorHidesPassword(t *testing.T) {
	const pw = "S3cr3t-RdPw/9"
	for _, raw := range []string{
		"redis://default:" + pw + "@127.0.0.1:6379/0",
		"redis://default:S3cr3t-RdPw#9@127.0.0.1:6379/0",
		"valkey://default:S3cr3t-RdPw?9@127.0.0.1:6379/0",
		"redis://default:" + pw + "@[::1",
	} {
		if _, _, err := parseAdminURL(raw); err == nil || leakedPiece(err.Error(), pw) != "" {
			t.Errorf("parseAdminURL(%q) = %v; want an error without a piece of the password", raw, err)
		}
		_, err := New().Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", noACL)})
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
// however it fails to parse, no error of the adapter's parse path
// (parseAdminURL, and Resolve with acl = false, which connects to
// nothing) shows a piece of the password of sdk.MinScrub bytes.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("redis://", "default", "S3cr3t-RdPw/9", "127.0.0.1:6379", "/0")
	f.Add("rediss://", "u", "p@ss#word", "h", "/1?dial_timeout=3s")
	f.Add("valkey://", "u", "pw pw pw", "[::1", "")
	f.Add("redis://", "u", "p%zzword", "h:6379", "/0")
	f.Add("unix://", "u", "secret", "", "/run/r.sock?db=x&password=secret2")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := scheme + user + ":" + pw + "@" + host + rest
		if _, _, err := parseAdminURL(raw); err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseAdminURL(%q): error %q shows %q", raw, err, p)
			}
		}
		a := New()
		defer a.Close()
		_, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", noACL)})
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("resolve with %q: error %q shows %q", raw, err, p)
			}
		}
	})
}

// checkRoundTrip checks that both addresses Resolve can answer for raw
// (the admin URL, with acl = false; the slice user's URL, with ACLs)
// parse back through net/url, parseAdminURL and go-redis to the same
// server, database and TLS setting.
func checkRoundTrip(t *testing.T, raw string) {
	t.Helper()
	u, opts, err := parseAdminURL(raw)
	if err != nil {
		return
	}
	a := New()
	defer a.Close()
	res, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", noACL)})
	if err != nil {
		t.Fatalf("admin %q parses but resolve fails: %v", raw, err)
	}
	user := url.UserPassword("acme_main", "derived/p@ss:w#rd")
	for _, addr := range []string{res.Address, slicedURL(u, user)} {
		if _, err := url.Parse(addr); err != nil {
			t.Fatalf("admin %q: address %q does not parse: %v", raw, addr, err)
		}
		_, back, err := parseAdminURL(addr)
		if err != nil {
			t.Fatalf("admin %q: address %q does not parse back: %v", raw, addr, err)
		}
		if back.Network != opts.Network || back.Addr != opts.Addr || back.DB != opts.DB || (back.TLSConfig == nil) != (opts.TLSConfig == nil) {
			t.Fatalf("admin %q (%s %s db %d): address %q reads back as %s %s db %d", raw, opts.Network, opts.Addr, opts.DB, addr, back.Network, back.Addr, back.DB)
		}
	}
	_, back, _ := parseAdminURL(slicedURL(u, user))
	if back.Username != "acme_main" || back.Password != "derived/p@ss:w#rd" {
		t.Fatalf("admin %q: slice address reads back as user %q password %q", raw, back.Username, back.Password)
	}
}
