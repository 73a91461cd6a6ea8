package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

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
	if m := kvPasswordRE().FindStringSubmatch(s); m != nil && isLiteral(strings.Trim(m[2], `'"`)) {
		return "a " + strings.ToLower(m[1]) + "= setting"
	}
	if m := dsnPasswordRE().FindStringSubmatch(s); m != nil && isLiteral(m[1]) {
		return "a password in a user:password@ address"
	}
	return ""
}

var (
	// key=value connection strings: host=db password=hunter2
	kvPasswordRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:^|[\s;])(password|passwd)\s*=\s*('[^']*'|"[^"]*"|[^\s;]+)`)
	})
	// Go MySQL DSNs: user:pass@tcp(host)/db
	dsnPasswordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)[^\s:/@]+:([^\s@]+)@(?:tcp|unix)\(`) })
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

	// envSecretWords widen secretWords for redaction (SecretEnv): a value
	// masked by mistake costs a garbled log line, a value shown by mistake
	// a leak. check's literal-secret warning keeps the narrower rule
	// (host/compose mirrors it for init).
	envSecretWords = []string{"PASS", "PWD", "KEY", "KEYS", "CRED", "CREDS", "PRIVATE", "AUTH", "DSN"}
	// envNotSecret are further last words that say how a secret is used,
	// not the secret (KEY_PREFIX, AUTH_MODE, PRIVATE_PORT).
	envNotSecret = []string{"PREFIX", "SUFFIX", "TYPE", "MODE", "METHOD", "ENABLED", "DISABLED", "PORT", "HOST", "USER", "USERNAME", "SIZE", "TIMEOUT", "COUNT"}
)

// secretEnvName is secretName widened for redaction: DB_PASS, SESSION_KEY,
// BASIC_AUTH and SENTRY_DSN are secrets too; KEY_PREFIX and AUTH_MODE are
// not.
func secretEnvName(name string) bool {
	if secretName(name) {
		return true
	}
	words := splitWords(name)
	if len(words) == 0 || slices.Contains(notSecret, words[len(words)-1]) || slices.Contains(envNotSecret, words[len(words)-1]) {
		return false
	}
	for _, w := range words {
		if slices.Contains(envSecretWords, w) {
			return true
		}
	}
	return false
}

// SecretEnv reports whether the value of ${env.NAME} is a secret that
// binky masks wherever it prints (logs, events, status, MCP output):
//   - NAME looks like a secret's (DB_PASSWORD, STRIPE_API_KEY, AUTH_TOKEN,
//     SENTRY_DSN…, not KEY_PREFIX or AUTH_MODE);
//   - or value is a URL that holds a password (user:pw@host);
//   - or the token reaches an admin_url, or an env or config key whose name
//     looks like a secret's (DATABASE_PASSWORD = "${env.PGPASS}");
//   - or [project] secrets lists NAME.
//
// Any other value (PORT=3000, DB_ADAPTER=sqlite) is ordinary text and is
// shown as it is. Values under 4 bytes are never masked, whatever the rule
// says (host/redact ignores them: they would mask ordinary text).
func SecretEnv(cfg *Config, name, value string) bool {
	if secretEnvName(name) || urlWithPassword(value) {
		return true
	}
	if cfg == nil {
		return false
	}
	if slices.Contains(cfg.Project.Secrets, name) {
		return true
	}
	ref := tokens.EnvVar(name)
	for _, svcName := range cfg.Order {
		s := cfg.Services[svcName]
		if s == nil {
			continue
		}
		for _, l := range serviceStrings(s) {
			key, last := l.path[2], l.path[len(l.path)-1]
			if key != "admin_url" && !((key == "env" || key == "config") && secretEnvName(last)) {
				continue
			}
			if slices.Contains(tokens.Refs(l.value), ref) {
				return true
			}
		}
	}
	return false
}

// SecretValues returns the values of env (resolved ${env.*} values by
// name) that SecretEnv calls secrets, sorted: what the daemon registers
// with its redactor and records for a restarted daemon.
func SecretValues(cfg *Config, env map[string]string) []string {
	var out []string
	for n, v := range env {
		if SecretEnv(cfg, n, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// urlWithPassword reports whether s holds a URL with a password in it.
func urlWithPassword(s string) bool {
	i := strings.Index(s, "://")
	if i < 0 {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.User == nil {
		return false
	}
	pw, ok := u.User.Password()
	return ok && pw != ""
}

// secretName reports whether a variable or setting name says it holds a
// secret (DB_PASSWORD, STRIPE_API_KEY, apiToken…).
// SecretName reports whether check calls a literal value under this name
// a secret (its literal-secret warning): the rule `binky init` must honour
// too (host/compose), so that check never warns about a file init wrote.
func SecretName(name string) bool { return secretName(name) }

// NameWords splits a variable or setting name into the upper-cased words
// the secret rules read (split on _ - . and lower→upper camel case).
func NameWords(s string) []string { return splitWords(s) }

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
