package tokens

import (
	"slices"
	"strings"
)

// Render replaces every ${name} in s whose name is a key of coords with its
// value. In a name, a leading "self." stands for "<self>.". Tokens that are
// not in coords, and malformed sequences, are copied unchanged; replaced
// values are not scanned again.
func Render(s, self string, coords map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	rest := s
	for {
		start, end, name, ok := next(rest)
		if !ok {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:start])
		if v, found := lookup(name, self, coords); found {
			b.WriteString(v)
		} else {
			b.WriteString(rest[start:end])
		}
		rest = rest[end:]
	}
}

// Refs returns the names of the tokens in s, in order of appearance, one
// entry per occurrence, exactly as written ("self.port", "env.PG_URL").
func Refs(s string) []string {
	var refs []string
	rest := s
	for {
		_, end, name, ok := next(rest)
		if !ok {
			return refs
		}
		refs = append(refs, name)
		rest = rest[end:]
	}
}

// next finds the first well-formed token in s: s[start:end] is "${name}".
func next(s string) (start, end int, name string, ok bool) {
	off := 0
	for {
		i := strings.Index(s[off:], "${")
		if i < 0 {
			return 0, 0, "", false
		}
		i += off
		j := i + 2
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '}' && j > i+2 && validName(s[i+2:j]) {
			return i, j + 1, s[i+2 : j], true
		}
		// Malformed: keep the "$" and look again from the next byte, so
		// "${a${b}}" still finds ${b}.
		off = i + 1
	}
}

func lookup(name, self string, coords map[string]string) (string, bool) {
	if self != "" {
		if rest, ok := strings.CutPrefix(name, Self+"."); ok {
			name = self + "." + rest
		}
	}
	v, ok := coords[name]
	return v, ok
}

// isNameByte reports whether c may appear in a token name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.'
}

// validName rejects empty segments: "a..b", ".a", "a.".
func validName(name string) bool {
	for seg := range strings.SplitSeq(name, ".") {
		if seg == "" {
			return false
		}
	}
	return true
}

// Split returns a token name's segments: "api.ports.http" → api, ports, http.
func Split(name string) []string { return strings.Split(name, ".") }

// Source lists every string of a config that tokens may appear in;
// *config.Config is one (its TokenStrings method).
type Source interface {
	TokenStrings() []string
}

// EnvNames returns every NAME of a ${env.NAME} token in src, sorted and
// unique: what the caller's environment or an env_file must supply. Names
// that are not valid variable names are skipped.
func EnvNames(src Source) []string {
	seen := map[string]bool{}
	var names []string
	for _, s := range src.TokenStrings() {
		for _, r := range Refs(s) {
			n, ok := strings.CutPrefix(r, Env+".")
			if ok && isVarName(n) && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}

// isVarName reports whether n is [A-Za-z_][A-Za-z0-9_]*.
func isVarName(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
