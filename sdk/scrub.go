package sdk

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ScrubMask is what Scrub puts where a password was.
const ScrubMask = "xxxxx"

// MinScrub is the shortest piece of a password that Scrub removes on its
// own. A message may quote only part of a password (net/url's parse errors
// quote a piece of the URL: `invalid port ":S3cr3t" after host` when the
// password holds a '/'), so every run of MinScrub or more bytes that also
// occurs in a password goes, not only the whole password.
const MinScrub = 4

// Scrub removes passwords from a message. Each password given is masked
// wherever it appears whole, in every form a message may carry it: plain,
// URL-escaped (path, query and userinfo escaping) and Go-quoted (as %q and
// *url.Error print it). For a password of MinScrub bytes or more, every
// run of at least MinScrub bytes of the message that occurs inside one of
// those forms is masked as well, so a quoted piece of a password goes too.
// Each masked run becomes ScrubMask.
//
// The price is that ordinary words a password shares with the message
// (password "postgres", message "provision postgres slice") are masked
// too; a message never keeps a piece of a password of MinScrub bytes.
func Scrub(msg string, passwords ...string) string {
	var forms []string
	for _, pw := range passwords {
		if pw != "" {
			forms = append(forms, passwordForms(pw)...)
		}
	}
	if len(forms) == 0 || msg == "" {
		return msg
	}
	covered := scrubCover(msg, forms)
	if covered == nil {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		j := i
		for j < len(msg) && covered[j] == covered[i] {
			j++
		}
		if covered[i] {
			b.WriteString(ScrubMask)
		} else {
			b.WriteString(msg[i:j])
		}
		i = j
	}
	return b.String()
}

// scrubCover marks the bytes of msg that Scrub masks for the given forms;
// nil when none. A run of MinScrub or more bytes occurs in a form exactly
// when each of its MinScrub-byte windows does, so marking every window
// found in a form marks every such run: one pass over msg, whatever the
// lengths.
func scrubCover(msg string, forms []string) []bool {
	var covered []bool
	mark := func(i, j int) {
		if covered == nil {
			covered = make([]bool, len(msg))
		}
		for k := i; k < j; k++ {
			covered[k] = true
		}
	}
	grams := map[string]struct{}{}
	for _, f := range forms {
		if len(f) < MinScrub {
			for off := 0; off+len(f) <= len(msg); {
				i := strings.Index(msg[off:], f)
				if i < 0 {
					break
				}
				mark(off+i, off+i+len(f))
				off += i + 1
			}
			continue
		}
		for i := 0; i+MinScrub <= len(f); i++ {
			grams[f[i:i+MinScrub]] = struct{}{}
		}
	}
	if len(grams) > 0 {
		for i := 0; i+MinScrub <= len(msg); i++ {
			if _, ok := grams[msg[i:i+MinScrub]]; ok {
				mark(i, i+MinScrub)
			}
		}
	}
	return covered
}

// passwordForms are the spellings of pw a message may hold.
func passwordForms(pw string) []string {
	forms := []string{pw, url.PathEscape(pw), url.QueryEscape(pw),
		strings.TrimPrefix(url.UserPassword("", pw).String(), ":")}
	if q := strconv.Quote(pw); len(q) > 2 {
		forms = append(forms, q[1:len(q)-1])
	}
	if q := strconv.QuoteToASCII(pw); len(q) > 2 {
		forms = append(forms, q[1:len(q)-1])
	}
	out := forms[:0]
	for _, f := range forms {
		dup := false
		for _, g := range out {
			dup = dup || g == f
		}
		if !dup {
			out = append(out, f)
		}
	}
	return out
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

// AdminPasswords lists what may be a password in an admin URL or DSN as
// the user wrote it, whether or not it parses: the passwords of the URL
// when it parses, the text between the first ':' of the userinfo and the
// last '@' (where a password sits in scheme://user:password@host and in a
// user:password@tcp(host) DSN, including one holding an unescaped '/',
// '#' or '@' that keeps the URL from parsing as meant), and every
// password= parameter, raw and unescaped.
func AdminPasswords(raw string) []string {
	var pws []string
	if u, err := url.Parse(raw); err == nil {
		pws = URLPasswords(u)
	}
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if c := strings.Index(rest[:at], ":"); c >= 0 {
			pws = append(pws, rest[c+1:at])
		}
	}
	for s := raw; ; {
		i := strings.Index(s, "password=")
		if i < 0 {
			break
		}
		s = s[i+len("password="):]
		v := s
		if j := strings.IndexAny(v, "&#"); j >= 0 {
			v = v[:j]
		}
		pws = append(pws, v)
		if un, err := url.QueryUnescape(v); err == nil && un != v {
			pws = append(pws, un)
		}
	}
	return pws
}

// ScrubAdmin is Scrub with AdminPasswords(raw): what an adapter runs
// every error message through, parse errors of the admin URL included.
func ScrubAdmin(msg, raw string) string {
	return Scrub(msg, AdminPasswords(raw)...)
}

// URLParseHint is the next step an adapter appends to "admin_url is not a
// URL": the usual cause is a password written unescaped.
const URLParseHint = " (percent-encode the URL's user and password: a '/' is %2F, '?' %3F, '#' %23, '@' %40, '%' %25)"

// IsNetworkError reports whether err is a failure to reach a server (DNS,
// dial, a broken connection): the adapter answers CodeUnreachable.
func IsNetworkError(err error) bool {
	var ne net.Error
	var de *net.DNSError
	var oe *net.OpError
	return errors.As(err, &de) || errors.As(err, &oe) || errors.As(err, &ne)
}
