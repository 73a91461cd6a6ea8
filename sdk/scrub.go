package sdk

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// Scrub removes passwords from a message: each one given, plain and in
// both URL escapings, becomes "xxxxx". Adapters run every error text that
// might quote a connection string through it.
func Scrub(msg string, passwords ...string) string {
	for _, pw := range passwords {
		if pw == "" {
			continue
		}
		for _, s := range []string{pw, url.PathEscape(pw), url.QueryEscape(pw)} {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// URLPasswords lists the passwords an admin URL carries: its userinfo
// password and any password query parameter.
func URLPasswords(u *url.URL) []string {
	if u == nil {
		return nil
	}
	var pws []string
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			pws = append(pws, pw)
		}
	}
	return append(pws, u.Query()["password"]...)
}

// ScrubURL is Scrub with the passwords of an admin URL.
func ScrubURL(msg string, u *url.URL) string {
	return Scrub(msg, URLPasswords(u)...)
}

// IsNetworkError reports whether err is a failure to reach a server (DNS,
// dial, a broken connection): the adapter answers CodeUnreachable.
func IsNetworkError(err error) bool {
	var ne net.Error
	var de *net.DNSError
	var oe *net.OpError
	return errors.As(err, &de) || errors.As(err, &oe) || errors.As(err, &ne)
}
