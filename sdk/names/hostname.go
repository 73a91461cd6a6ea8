package names

import (
	"fmt"
	"strings"
)

// DefaultHostTemplate is the hostname template of a project that sets
// none: Host's <svc>.<worktree>.<project>, before the apex.
const DefaultHostTemplate = "{service}.{worktree}.{project}"

// DefaultApex is the zone every name lives under unless a project sets
// another.
const DefaultApex = "localhost"

// HostPlaceholders are the names a hostname template may hold, each
// between braces.
var HostPlaceholders = []string{"service", "worktree", "branch", "project", "user"}

// HostVars are the values a hostname template is filled with. Each is
// passed through a fold to a DNS label before it is pasted in (see
// HostFrom).
type HostVars struct {
	// Service is the service's label (its url, or its host override).
	Service string
	// Worktree is the world's name, or the stable name it was handed.
	Worktree string
	// Branch is the branch as git spells it (feat/login).
	Branch  string
	Project string
	// User is the Unix user name of the home's owner.
	User string
}

// CheckHostTemplate reports what is wrong with a hostname template, or
// nil: it is dot-separated labels of [a-z0-9-] and placeholders
// ({service}, {worktree}, {branch}, {project}, {user}), with no empty label
// and no apex (the apex is set apart).
func CheckHostTemplate(t string) error {
	if t == "" {
		return fmt.Errorf("is empty")
	}
	if len(t) > 253 {
		return fmt.Errorf("is longer than 253 characters")
	}
	for _, label := range strings.Split(t, ".") {
		if label == "" {
			return fmt.Errorf("has an empty label (a leading, trailing or doubled '.')")
		}
		rest := label
		for rest != "" {
			open := strings.IndexByte(rest, '{')
			lit := rest
			if open >= 0 {
				lit = rest[:open]
			}
			for i := 0; i < len(lit); i++ {
				c := lit[i]
				if c == '}' {
					return fmt.Errorf("has a '}' without its '{'")
				}
				if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
					return fmt.Errorf("holds %q: a hostname is lowercase letters, digits, '-' and '.'", string(c))
				}
			}
			if open < 0 {
				break
			}
			end := strings.IndexByte(rest[open:], '}')
			if end < 0 {
				return fmt.Errorf("has a '{' without its '}'")
			}
			name := rest[open+1 : open+end]
			if !isPlaceholder(name) {
				return fmt.Errorf("has an unknown placeholder {%s} (known: {%s})", name, strings.Join(HostPlaceholders, "}, {"))
			}
			rest = rest[open+end+1:]
		}
	}
	return nil
}

func isPlaceholder(name string) bool {
	for _, p := range HostPlaceholders {
		if p == name {
			return true
		}
	}
	return false
}

// CheckApex reports what is wrong with an apex (the zone after a world's
// labels: localhost, test, dev.internal), or nil: one or more labels, each
// IsLabel.
func CheckApex(apex string) error {
	if apex == "" || len(apex) > 200 {
		return fmt.Errorf("must be 1 to 200 characters")
	}
	for _, l := range strings.Split(apex, ".") {
		if !IsLabel(l) {
			return fmt.Errorf("label %q is not a DNS label (lowercase letters, digits and '-', not at either end)", l)
		}
	}
	return nil
}

// HostFrom fills the hostname template tmpl ("" is DefaultHostTemplate)
// with v and appends the apex ("" is DefaultApex). Each value is made a
// label first: Service, Worktree and Project by Label (a worktree name is
// its own label), Branch by BranchLabel, User by UserLabel. Every label of
// the result must be a DNS label (IsLabel) and the whole at most 253
// bytes; otherwise it is an error naming the label. With the default
// template and apex it equals Host(v.Service, v.Worktree, v.Project).
func HostFrom(tmpl, apex string, v HostVars) (string, error) {
	if tmpl == "" {
		tmpl = DefaultHostTemplate
	}
	if apex == "" {
		apex = DefaultApex
	}
	if err := CheckHostTemplate(tmpl); err != nil {
		return "", fmt.Errorf("hostname template %q %w", tmpl, err)
	}
	r := strings.NewReplacer(
		"{service}", Label(v.Service),
		"{worktree}", Label(v.Worktree),
		"{branch}", BranchLabel(v.Branch),
		"{project}", Label(v.Project),
		"{user}", UserLabel(v.User),
	)
	h := r.Replace(tmpl) + "." + apex
	for _, l := range strings.Split(h, ".") {
		if !IsLabel(l) {
			return "", fmt.Errorf("hostname %s: label %q is not a DNS label (1 to 63 of a-z, 0-9 and '-', not at either end, no '--' in places 3-4): shorten the template %q", h, l, tmpl)
		}
	}
	if len(h) > 253 {
		return "", fmt.Errorf("hostname %s is longer than 253 characters", h)
	}
	return h, nil
}

// BranchLabel is the label {branch} gives: the branch folded as a worktree
// name is (lowercased, each run of bytes outside [a-z0-9] one '-', no '-'
// at either end: feat/Login → feat-login), without the hash suffix a
// colliding world name gets; a branch whose fold is empty, too long or
// hash-shaped gets Worktree's hashed form.
func BranchLabel(branch string) string {
	return WorktreeShort(branch)
}

// UserLabel is the label {user} gives: the user name folded as a branch
// is, or "user" when nothing of it is left.
func UserLabel(user string) string {
	f := fold(user, '-')
	if len(f) > MaxLabel {
		f = cut(f, MaxLabel, '-')
	}
	if f == "" {
		return "user"
	}
	return f
}

// PrivateZones are the zones no one can register a public name under
// (RFC 6761 test and example, RFC 8375 home.arpa, ICANN's internal) beside
// localhost: the only apexes binky's local CA certifies, since a CA for a
// public zone could vouch for real sites.
var PrivateZones = []string{"localhost", "test", "example", "internal", "home.arpa"}

// PrivateZone returns the zone of PrivateZones that name is, or is under,
// and whether there is one.
func PrivateZone(name string) (string, bool) {
	for _, z := range PrivateZones {
		if name == z || strings.HasSuffix(name, "."+z) {
			return z, true
		}
	}
	return "", false
}
