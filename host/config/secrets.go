package config

import (
	"regexp"
	"strings"

	"github.com/binkyhq/binky/host/tokens"
)

// literalCredential returns a description of a credential written literally
// in s ("a password in a postgres:// URL"), or "" when there is none. Parts
// that are ${…} tokens are not literal.
func literalCredential(s string) string {
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		scheme := schemeBefore(rest[:i])
		auth := rest[i+3:]
		if end := strings.IndexAny(auth, "/?# \t\n\"'"); end >= 0 {
			auth = auth[:end]
		}
		if at := strings.LastIndex(auth, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(auth[:at], ":"); ok && isLiteral(pw) {
				if scheme == "" {
					return "a password in a URL"
				}
				return "a password in the " + scheme + " URL"
			}
		}
		rest = rest[i+3:]
	}
	if m := kvPasswordRE.FindStringSubmatch(s); m != nil && isLiteral(strings.Trim(m[2], `'"`)) {
		return "a " + strings.ToLower(m[1]) + "= setting"
	}
	if m := dsnPasswordRE.FindStringSubmatch(s); m != nil && isLiteral(m[1]) {
		return "a password in a user:password@ address"
	}
	return ""
}

var (
	// key=value connection strings: host=db password=hunter2
	kvPasswordRE = regexp.MustCompile(`(?i)(?:^|[\s;])(password|passwd)\s*=\s*('[^']*'|"[^"]*"|[^\s;]+)`)
	// Go MySQL DSNs: user:pass@tcp(host)/db
	dsnPasswordRE = regexp.MustCompile(`(?:^|\s)[^\s:/@]+:([^\s@]+)@(?:tcp|unix)\(`)
)

func schemeBefore(s string) string {
	j := len(s)
	for j > 0 {
		c := s[j-1]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			break
		}
		j--
	}
	return strings.ToLower(s[j:])
}

// isLiteral reports whether s holds text that is not a ${…} token.
func isLiteral(s string) bool {
	for _, r := range tokens.Refs(s) {
		s = strings.Replace(s, "${"+r+"}", "", 1)
	}
	return s != ""
}

// secretWords mark a variable or setting name as holding a secret.
var (
	secretWords = []string{"PASSWORD", "PASSWD", "SECRET", "SECRETS", "TOKEN", "TOKENS", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PRIVATEKEY"}
	secretPairs = [][2]string{{"API", "KEY"}, {"ACCESS", "KEY"}, {"PRIVATE", "KEY"}, {"SECRET", "KEY"}, {"AUTH", "KEY"}, {"SIGNING", "KEY"}, {"ENCRYPTION", "KEY"}, {"CLIENT", "SECRET"}}
	// notSecret suffixes name where a secret lives, not the secret.
	notSecret = []string{"FILE", "PATH", "DIR", "URL", "ENDPOINT", "HEADER", "NAME", "TTL", "LENGTH", "EXPIRY"}
)

// secretName reports whether a variable or setting name says it holds a
// secret (DB_PASSWORD, STRIPE_API_KEY, apiToken…).
func secretName(name string) bool {
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	for _, s := range notSecret {
		if words[len(words)-1] == s {
			return false
		}
	}
	for i, w := range words {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
		if i > 0 {
			for _, p := range secretPairs {
				if words[i-1] == p[0] && w == p[1] {
					return true
				}
			}
		}
	}
	return false
}

// splitWords splits on _ - . and lower→upper camel-case boundaries, and
// upper-cases the words.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToUpper(cur.String()))
			cur.Reset()
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			flush()
		}
		cur.WriteRune(r)
		prevLower = r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
	}
	flush()
	return words
}
