package names_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// The checkers below restate each backend's rules from its documentation,
// independently of the package's own code, and return a reason or "".

var (
	reWorktree = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	reSlice    = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*[a-z0-9]$`)
	reIPv4     = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$`)
	reHashTail = regexp.MustCompile(`-[0-9a-f]{6}$`)
)

func sha6(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:6]
}

func checkWorktree(w string) string {
	switch {
	case len(w) > 63:
		return fmt.Sprintf("%d bytes, over 63", len(w))
	case !reWorktree.MatchString(w):
		return "not [a-z0-9]+(-[a-z0-9]+)*"
	}
	return checkLabel(w)
}

func checkLabel(l string) string {
	switch {
	case l == "" || len(l) > 63:
		return fmt.Sprintf("label of %d bytes", len(l))
	case strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-"):
		return "label starts or ends with '-'"
	case strings.HasPrefix(l, "xn--"):
		return "label starts xn--"
	case len(l) >= 4 && l[2:4] == "--":
		return "label has -- in places 3 and 4"
	case strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		return "label has a byte outside [a-z0-9-]"
	}
	return ""
}

func checkHost(h string) string {
	if !strings.HasSuffix(h, ".localhost") {
		return "host does not end .localhost"
	}
	if len(h) > 253 {
		return "host over 253 bytes"
	}
	parts := strings.Split(strings.TrimSuffix(h, ".localhost"), ".")
	if len(parts) != 3 {
		return fmt.Sprintf("host has %d labels before localhost; want 3", len(parts))
	}
	for _, p := range parts {
		if r := checkLabel(p); r != "" {
			return r
		}
	}
	return ""
}

func checkSlice(s string) string {
	switch {
	case len(s) < 3 || len(s) > 63:
		return fmt.Sprintf("slice of %d bytes", len(s))
	case !reSlice.MatchString(s):
		return "slice not [a-z0-9][a-z0-9_]*[a-z0-9]"
	case !strings.Contains(s, "_"):
		return "slice without '_'"
	}
	return ""
}

func checkPostgres(s string) string {
	if s == "" || len(s) > 63 {
		return fmt.Sprintf("postgres name of %d bytes", len(s))
	}
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "postgres name outside [a-z0-9_]"
	}
	switch s {
	case "postgres", "template0", "template1":
		return "postgres system database"
	}
	return ""
}

func checkMySQL(s string) string {
	if s == "" || len(s) > 64 {
		return fmt.Sprintf("mysql name of %d bytes", len(s))
	}
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "mysql name outside [a-z0-9_]"
	}
	switch s {
	case "mysql", "sys", "information_schema", "performance_schema":
		return "mysql system schema"
	}
	return ""
}

func checkBucket(b string) string {
	switch {
	case len(b) < 3 || len(b) > 63:
		return fmt.Sprintf("bucket of %d bytes", len(b))
	case strings.Trim(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "":
		return "bucket outside [a-z0-9.-]"
	case !strings.ContainsAny(b[:1], "abcdefghijklmnopqrstuvwxyz0123456789"),
		!strings.ContainsAny(b[len(b)-1:], "abcdefghijklmnopqrstuvwxyz0123456789"):
		return "bucket does not start and end with a letter or digit"
	case strings.Contains(b, ".."), strings.Contains(b, ".-"), strings.Contains(b, "-."):
		return "bucket has .. or a dot beside a dash"
	case reIPv4.MatchString(b):
		return "bucket shaped like an IP address"
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(b, p) {
			return "bucket starts " + p
		}
	}
	for _, p := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(b, p) {
			return "bucket ends " + p
		}
	}
	return ""
}

func checkKafkaPrefix(p string) string {
	switch {
	case !strings.HasSuffix(p, "."):
		return "kafka prefix does not end with '.'"
	case len(p) > 249-100:
		return "kafka prefix leaves under 100 bytes for the topic"
	case strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "":
		return "kafka prefix outside [a-zA-Z0-9._-]"
	case strings.HasPrefix(p, "__"), strings.HasPrefix(p, "."):
		return "kafka prefix starts like an internal topic"
	}
	return ""
}

func checkVhost(v string) string {
	if v == "" || len(v) > 255 || v == "/" {
		return "vhost empty, default or over 255 bytes"
	}
	if strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "vhost outside [a-z0-9_]"
	}
	return ""
}

func checkRedisPrefix(p string) string {
	if !strings.HasSuffix(p, ":") || strings.Count(p, ":") != 1 || len(p) < 2 {
		return "redis prefix not <name>:"
	}
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_:") != "" {
		return "redis prefix outside [a-z0-9_:]"
	}
	return ""
}

func checkIndexPrefix(p string) string {
	switch {
	case !strings.HasSuffix(p, "-") || len(p) < 2 || len(p) > 255-64:
		return "index prefix not <name>- leaving 64 bytes"
	case strings.ContainsAny(p[:1], "-_+."):
		return "index prefix starts with - _ + or ."
	case strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "":
		return "index prefix outside [a-z0-9_-]"
	}
	return ""
}
