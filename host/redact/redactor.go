package redact

import (
	"net/url"
	"slices"
	"strings"
	"sync"
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
	mu      sync.RWMutex
	secrets []string // distinct, longest first
}

// New returns a Redactor that knows the given secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add registers a secret. Values shorter than MinLen bytes are ignored. The
// URL-encoded forms of the value (query and path escaping) are registered
// too, and when the value is a URL with a password, so is the password and
// its encoded forms.
func (r *Redactor) Add(secret string) {
	if r == nil || len(secret) < MinLen {
		return
	}
	forms := variants(secret)
	if u, err := url.Parse(secret); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			forms = append(forms, variants(pw)...)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms {
		if len(f) < MinLen || slices.Contains(r.secrets, f) {
			continue
		}
		r.secrets = append(r.secrets, f)
	}
	// Longest first, so a secret that contains another is matched whole.
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

func variants(s string) []string {
	return []string{s, url.QueryEscape(s), url.PathEscape(s)}
}

// Len reports how many distinct forms are registered.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets)
}

// snapshot returns the current secrets (the slice is never mutated in place
// after being handed out: Add appends or re-sorts under the lock, so callers
// copy).
func (r *Redactor) snapshot() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.secrets) == 0 {
		return nil
	}
	return slices.Clone(r.secrets)
}

// String returns s with every occurrence of every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	secrets := r.snapshot()
	if len(secrets) == 0 {
		return s
	}
	covered := cover([]byte(s), secrets)
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
	secrets := r.snapshot()
	if len(secrets) == 0 {
		return slices.Clone(p)
	}
	covered := cover(p, secrets)
	if covered == nil {
		return slices.Clone(p)
	}
	var b strings.Builder
	emit(&b, p, covered)
	return []byte(b.String())
}

// cover marks every byte of p that lies inside an occurrence of a secret,
// overlapping occurrences included. It returns nil when nothing matched.
func cover(p []byte, secrets []string) []bool {
	var covered []bool
	s := string(p) // one copy; strings.Index is the fast path
	for _, sec := range secrets {
		for off := 0; off <= len(s)-len(sec); {
			i := strings.Index(s[off:], sec)
			if i < 0 {
				break
			}
			start := off + i
			if covered == nil {
				covered = make([]bool, len(p))
			}
			for j := start; j < start+len(sec); j++ {
				covered[j] = true
			}
			off = start + 1
		}
	}
	return covered
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
