package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/binkyhq/binky/sdk"
)

// Mask is what every occurrence of a secret becomes. Overlapping or adjacent
// occurrences become a single Mask.
const Mask = "***"

// MinLen is the shortest secret a Redactor accepts. Shorter values (an empty
// password, "1", "yes") would mask ordinary text everywhere and are ignored.
const MinLen = 4

// Redactor replaces known secrets with Mask. The zero value is ready to use;
// a nil *Redactor redacts nothing. It is safe for concurrent use.
type Redactor struct {
	mu    sync.RWMutex
	forms []string // distinct, longest first
	m     *matcher // built from forms; replaced, never changed, by Add
}

// New returns a Redactor that knows the given secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add registers a secret. Values shorter than MinLen bytes are ignored.
// Every form of the value is registered (see Forms), and when the value is a
// URL with a password, so is the password in all its forms.
//
// A server address that carries nothing secret — a database or broker URL
// with no password, query or fragment, such as the admin_url
// postgres://postgres@127.0.0.1:5432/postgres of a trust-auth server — is
// not registered: it is the prefix of every slice address built on it, and
// masking it would show a slice as ***name.
func (r *Redactor) Add(secret string) {
	if r == nil || len(secret) < MinLen || plainServerAddress(secret) {
		return
	}
	forms := Forms(secret)
	if u, err := url.Parse(secret); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && len(pw) >= MinLen {
			forms = append(forms, Forms(pw)...)
		}
	}
	r.addForms(forms)
}

// serverSchemes are the URL schemes of database and broker addresses.
// http and https are not among them: a URL of theirs may carry a token in
// its path (a webhook).
var serverSchemes = []string{
	"postgres", "postgresql", "mysql", "mariadb", "redis", "rediss", "valkey", "valkeys",
	"mongodb", "mongodb+srv", "amqp", "amqps", "kafka", "clickhouse", "sqlite", "s3",
}

// plainServerAddress reports whether s is a server URL without a password,
// query or fragment: an address, not a secret.
func plainServerAddress(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return false
	}
	if !slices.Contains(serverSchemes, strings.ToLower(u.Scheme)) {
		return false
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return false
		}
	}
	return true
}

// AddAddress registers the passwords an address carries (an adapter's
// resolved address or a value such as a DSN): the userinfo password of a
// URL, a password= parameter, the password of user:password@tcp(…), also
// when the address does not parse (sdk.AdminPasswords). The rest of the
// address is not secret and is not registered.
func (r *Redactor) AddAddress(addr string) {
	if r == nil {
		return
	}
	for _, pw := range sdk.AdminPasswords(addr) {
		r.Add(pw)
	}
}

func (r *Redactor) addForms(forms []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.forms)
	for _, f := range forms {
		if len(f) < MinLen || slices.Contains(r.forms, f) {
			continue
		}
		r.forms = append(r.forms, f)
	}
	if len(r.forms) == n {
		return
	}
	// Longest first, so a secret that contains another is matched whole.
	slices.SortStableFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	r.m = newMatcher(r.forms)
}

// Forms lists the spellings of a secret a Redactor masks: the value itself;
// URL-encoded (query and path escaping); hex, lower and upper case; base64
// in the standard and URL alphabets, with and without padding; and, for
// each alphabet, the base64 characters that depend on the secret alone when
// it sits inside a longer base64 text at each of the three byte alignments
// (the characters at either edge also carry neighbouring bits, so they are
// not part of the form). Forms shorter than MinLen are left out.
func Forms(secret string) []string {
	forms := []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(secret)))
	}
	n := len(secret)
	for a := range 3 {
		b := make([]byte, a+n)
		copy(b[a:], secret)
		// Character j covers bits [6j, 6j+6); the secret's bits are
		// [8a, 8a+8n).
		lo, hi := (8*a+5)/6, (8*a+8*n)/6
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			forms = append(forms, enc.EncodeToString(b)[lo:hi])
		}
	}
	out := forms[:0]
	for _, f := range forms {
		if len(f) >= MinLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Len reports how many distinct forms are registered.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.forms)
}

// matcher returns the current matcher (immutable), or nil when nothing is
// registered.
func (r *Redactor) matcher() *matcher {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m
}

// String returns s with every occurrence of every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	m := r.matcher()
	if m == nil {
		return s
	}
	covered, _ := m.cover([]byte(s), false)
	if covered == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	emit(&b, []byte(s), covered)
	return b.String()
}

// Bytes is String for a byte slice; it returns a new slice.
func (r *Redactor) Bytes(p []byte) []byte {
	m := r.matcher()
	if m == nil {
		return slices.Clone(p)
	}
	covered, _ := m.cover(p, false)
	if covered == nil {
		return slices.Clone(p)
	}
	var b strings.Builder
	emit(&b, p, covered)
	return []byte(b.String())
}

// emit writes p with each maximal run of covered bytes replaced by one Mask.
func emit(b *strings.Builder, p []byte, covered []bool) {
	for i := 0; i < len(p); {
		if !covered[i] {
			j := i
			for j < len(p) && !covered[j] {
				j++
			}
			b.Write(p[i:j])
			i = j
			continue
		}
		b.WriteString(Mask)
		for i < len(p) && covered[i] {
			i++
		}
	}
}
