package compose

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/binkyhq/binky/host/config"
)

// This file decides which compose values init may write into binky.toml
// as they are. It is deliberately wider than host/config's rule
// (config.SecretName), which it calls: everything that rule calls a secret
// is a secret here too, or binky check would warn about the file init
// wrote. TestSecretRuleCoversConfig checks the two together.

// initSecretWords are the words init adds to host/config's rule: a name
// holding one of them is never written with its value, whatever the
// value is.
var initSecretWords = []string{"KEY", "KEYS", "AUTH", "PRIVATE", "DSN", "PASS", "PWD", "PASSPHRASE", "SALT", "PEPPER", "JWT", "BEARER", "COOKIE", "SIGNATURE", "CERT", "LICENSE", "WEBHOOK"}

// notSecretLast name where a secret lives, not the secret
// (DB_PASSWORD_FILE, AUTH_URL), as host/config's rule reads them.
var notSecretLast = []string{"FILE", "PATH", "DIR", "URL", "ENDPOINT", "HEADER", "NAME", "TTL", "LENGTH", "EXPIRY"}

// configSecretName is host/config's rule: a name binky check warns about
// when its value is a literal.
func configSecretName(name string) bool { return config.SecretName(name) }

// SecretName reports whether init treats a variable named name as a
// secret: host/config's rule, plus any word of initSecretWords.
func SecretName(name string) bool {
	if config.SecretName(name) {
		return true
	}
	ws := splitWords(name)
	if len(ws) == 0 || slices.Contains(notSecretLast, ws[len(ws)-1]) {
		return false
	}
	for _, w := range ws {
		if slices.Contains(initSecretWords, w) {
			return true
		}
	}
	return false
}

// splitWords is host/config's: upper-cased words of a name.
func splitWords(s string) []string { return config.NameWords(s) }

var (
	// kvPassword and dsnPassword are host/config's: password=… settings
	// and Go MySQL DSNs user:pass@tcp(…).
	kvPassword  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(?:^|[\s;])(password|passwd)\s*=`) })
	dsnPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)[^\s:/@]+:[^\s@]+@(?:tcp|unix)\(`) })
	// queryParam is one name=value of a URL query or a ;-separated list.
	queryParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[?&;]([A-Za-z0-9_.-]+)=`) })
	// randomRun is a run of characters tokens and keys are made of.
	randomRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+/=_-]{16,}`) })
)

// secretValue reports whether a literal value (compose interpolation
// already taken out) holds or looks like a secret, whatever its name: a
// credential in a URL (user:password@), a password= setting or DSN, a
// query parameter named like a secret (?token=…), a PEM block, or a run
// of characters keys are made of that looks random: 16 or more with
// digits and letters of both cases, or 32 or more with digits and
// letters.
func secretValue(v string) bool {
	if strings.ContainsAny(v, "\n\r") || strings.Contains(v, "-----BEGIN") {
		return true
	}
	rest := v
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		auth := rest[i+3:]
		if end := strings.IndexAny(auth, "/?# \t\"'"); end >= 0 {
			auth = auth[:end]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 && strings.Contains(auth[:at], ":") {
			return true
		}
		rest = rest[i+3:]
	}
	if kvPassword().MatchString(v) || dsnPassword().MatchString(v) {
		return true
	}
	for _, m := range queryParam().FindAllStringSubmatch(v, -1) {
		if SecretName(m[1]) || strings.EqualFold(m[1], "sig") || strings.EqualFold(m[1], "key") {
			return true
		}
	}
	for _, run := range randomRun().FindAllString(v, -1) {
		var lower, upper, digit bool
		for _, r := range run {
			switch {
			case r >= 'a' && r <= 'z':
				lower = true
			case r >= 'A' && r <= 'Z':
				upper = true
			case r >= '0' && r <= '9':
				digit = true
			}
		}
		if digit && (lower && upper || (lower || upper) && len(run) >= 32) {
			return true
		}
	}
	return false
}

// flagValue reports whether v is a switch (true, no, 0, 1…): a value no
// one keeps secret, written as it is even under a name init's wider rule
// calls secret (AUTH_ENABLED=true), though not under host/config's.
func flagValue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "0", "1", "":
		return true
	}
	return false
}
