package redact

import (
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
	forms []form         // distinct, in the order registered
	index map[string]int // forms[index[s]].s == s
	m     *matcher       // built from forms when first needed; never changed
	stale bool           // forms changed since m was built
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
// Every form of the value is registered (see Forms), each line of a
// multi-line value that is a fragment too, and when the value is a URL with
// a password, so is the password in all its forms.
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
	forms := formsOf(secret)
	if u, err := url.Parse(secret); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && len(pw) >= MinLen {
			forms = append(forms, formsOf(pw)...)
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

func (r *Redactor) addForms(forms []form) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.index == nil {
		r.index = map[string]int{}
	}
	for _, f := range forms {
		if len(f.s) < MinLen {
			continue
		}
		if i, ok := r.index[f.s]; ok {
			if f.edge && !r.forms[i].edge {
				r.forms[i].edge, r.stale = true, true
			}
			continue
		}
		r.index[f.s] = len(r.forms)
		r.forms = append(r.forms, f)
		r.stale = true
	}
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
// registered. It is built on first use after an Add, so that registering
// many secrets in a row (a daemon reading its registry) builds it once.
func (r *Redactor) matcher() *matcher {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	m, stale := r.m, r.stale
	r.mu.RUnlock()
	if !stale {
		return m
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stale {
		// Longest first: the order in which forms that start alike are
		// compared.
		forms := slices.Clone(r.forms)
		slices.SortStableFunc(forms, func(a, b form) int { return len(b.s) - len(a.s) })
		r.m, r.stale = newMatcher(forms), false
	}
	return r.m
}

// String returns s with every occurrence of every secret replaced by Mask.
// s is taken as a window of a longer text: where it begins or ends inside
// a line of a multi-line secret, the part it holds is masked too when it
// is MinLen bytes or more (see the package documentation).
func (r *Redactor) String(s string) string {
	m := r.matcher()
	if m == nil {
		return s
	}
	covered, _, _ := m.cover([]byte(s), scan{start: true, end: true})
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
	covered, _, _ := m.cover(p, scan{start: true, end: true})
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
