package httpx

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Endpoint is a parsed admin URL: where the server's HTTP API lives and the
// basic-auth credentials to send it.
type Endpoint struct {
	// Base is scheme://host[:port][/path], without credentials, query or
	// fragment, and without a trailing '/'.
	Base *url.URL
	// User and Password are the admin URL's userinfo; HasAuth says whether
	// it had any.
	User, Password string
	HasAuth        bool
	// KeyHeader, when set, names the header the password goes in as an
	// API key (Qdrant's "api-key") instead of basic auth.
	KeyHeader string
	// Query is the admin URL's query (ClickHouse takes settings there).
	Query url.Values

	raw string // as the request gave it, for scrubbing
}

// ParseAdminURL checks an admin_url of an HTTP API: http:// or https://,
// a host, optional user:password. example is a URL to suggest. Its errors
// have code invalid and never quote the URL's password, whole or in part.
func ParseAdminURL(raw, example string) (*Endpoint, error) {
	if raw == "" {
		return nil, Invalid(raw, "no admin_url: set the service's admin_url to a URL like %s", example)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, Invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, Invalid(raw, "admin_url must start with http:// or https:// (like %s); got scheme %q", example, u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, Invalid(raw, "admin_url names no server: use a URL like %s", example)
	}
	if strings.Contains(raw, "#") {
		return nil, Invalid(raw, "admin_url has a '#' (the start of a URL fragment, which no server reads); percent-encode a '#' in the user or password as %%23")
	}
	if !ValidHost(u.Hostname()) {
		return nil, Invalid(raw, "admin_url's host is neither a host name nor an IP address")
	}
	if p := u.Port(); p != "" && !allDigits(p) {
		return nil, Invalid(raw, "admin_url has a port that is not a number")
	}
	ep := &Endpoint{raw: raw, Query: u.Query()}
	if u.User != nil {
		ep.HasAuth = true
		ep.User = u.User.Username()
		ep.Password, _ = u.User.Password()
	}
	base := *u
	base.User = nil
	base.RawQuery = ""
	base.ForceQuery = false
	base.Fragment = ""
	base.RawFragment = ""
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = strings.TrimRight(base.RawPath, "/")
	ep.Base = &base
	return ep, nil
}

// ValidHost reports whether h is an IP address or a host name (letters,
// digits, '.', '-' and '_', starting with a letter or digit).
func ValidHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 || !alnum(h[0]) {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !alnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// URL is the endpoint's base with path segments appended, each escaped as
// one segment (a '/' in a segment becomes %2F), and an optional query.
func (e *Endpoint) URL(query url.Values, segments ...string) string {
	var b strings.Builder
	b.WriteString(e.Base.String())
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if len(query) > 0 {
		b.WriteByte('?')
		b.WriteString(query.Encode())
	}
	return b.String()
}

// Scrub removes the admin URL's passwords, and any extra secrets, from msg.
func (e *Endpoint) Scrub(msg string, secrets ...string) string {
	return Scrub(msg, e.raw, secrets...)
}

// Scrub removes every password the admin URL raw may carry (see
// sdk.AdminPasswords), and the extra secrets, from msg.
func Scrub(msg, raw string, secrets ...string) string {
	return sdk.Scrub(msg, append(sdk.AdminPasswords(raw), secrets...)...)
}

// Invalid is a code-invalid error about the admin URL raw, scrubbed.
func Invalid(raw, format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", Scrub(fmt.Sprintf(format, args...), raw))
}
