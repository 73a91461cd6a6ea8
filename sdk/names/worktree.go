package names

import "strings"

// MaxLabel is the longest DNS label, and so the longest worktree name.
const MaxLabel = 63

// Worktree returns the worktree name of a branch: the branch lowercased,
// every run of bytes outside [a-z0-9] folded to one '-', with leading and
// trailing '-' dropped. When that changed the branch in any way, or the
// branch could be mistaken for a hashed name, or is a name Windows reserves
// for a device, or is longer than MaxLabel, the first six hex digits of the
// SHA-256 of the branch are appended after a '-' (the folded part cut so the
// whole fits MaxLabel). So feat/a, feat-a and Feat/A give three names, and
// an empty or all-symbol branch still gives a valid one ("wt-<hash>").
//
// The result is 1 to MaxLabel bytes of [a-z0-9]+(-[a-z0-9]+)*: a valid
// DNS label, directory name and, with '-' read as '_', identifier.
func Worktree(branch string) string {
	f := fold(branch, '-')
	if f == branch && f != "" && len(f) <= MaxLabel && !hashTailed(f, '-') && !windowsDevice(f) {
		return f
	}
	return hashed(branch)
}

// hashed is the folded branch, cut to fit, with the hash suffix always.
func hashed(branch string) string {
	f := fold(branch, '-')
	head := cut(f, MaxLabel-1-hashLen, '-')
	if head == "" {
		head = "wt"
	}
	return head + "-" + branchHash(branch)
}

// IsWorktree reports whether s has the shape of a worktree name: 1 to
// MaxLabel bytes of [a-z0-9]+(-[a-z0-9]+)*. Every Worktree result has it;
// so does a branch that Worktree leaves unchanged.
func IsWorktree(s string) bool {
	return s != "" && len(s) <= MaxLabel && fold(s, '-') == s
}

// Label returns the DNS label for a worktree name: the name itself when it
// has the shape of one (IsWorktree), else Worktree(s). A branch given in
// place of a worktree name therefore yields the label of that branch's
// worktree. The result is 1 to 63 bytes of [a-z0-9-], never starts or ends
// with '-', and never contains "--" (so never starts "xn--").
func Label(s string) string {
	if IsWorktree(s) {
		return s
	}
	return Worktree(s)
}

// IsLabel reports whether s is a lowercase LDH DNS label binky accepts: 1
// to 63 bytes of [a-z0-9-], not starting or ending with '-', and without
// "--" in the third and fourth place (the reserved xn-- form).
func IsLabel(s string) bool {
	if s == "" || len(s) > MaxLabel || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	if len(s) >= 4 && s[2] == '-' && s[3] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Host returns the proxied hostname of a service of a worktree:
// <svc>.<worktree>.<project>.localhost, each part passed through Label.
func Host(svc, worktree, project string) string {
	return Label(svc) + "." + Label(worktree) + "." + Label(project) + ".localhost"
}

// windowsDevice reports whether s is a file name Windows reserves for a
// device (CON, NUL, COM1…), which cannot name a worktree directory there.
func windowsDevice(s string) bool {
	switch s {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(s) == 4 && (strings.HasPrefix(s, "com") || strings.HasPrefix(s, "lpt")) {
		return s[3] >= '0' && s[3] <= '9'
	}
	return false
}

// WorktreeShort is the name a branch's world gets when no other branch
// claims it: the branch folded as Worktree folds it, without a hash
// suffix, so a URL or database name can be written from the branch
// (feat/one → feat-one). When the fold alone is not a usable name (empty,
// longer than MaxLabel, shaped like a hashed name, a Windows device name)
// it is Worktree(branch).
func WorktreeShort(branch string) string {
	f := fold(branch, '-')
	if f != "" && len(f) <= MaxLabel && !hashTailed(f, '-') && !windowsDevice(f) {
		return f
	}
	return Worktree(branch)
}

// WorktreeAmong picks the name of a new world for branch: WorktreeShort,
// unless it would collide, then the folded branch with the hash suffix
// (what Worktree gives a branch folding changes; here also for one it
// does not, feat-one → feat-one-<hash>).
// It collides when held reports a world of another branch under that name
// (held returns the branch of the world recorded with a name), or, for a
// branch that folding changed, when another of branches (the repository's
// branches) folds to the same name. So with branches feat/one and
// feat-one, feat-one keeps its name and feat/one gets the hash; and a
// branch upped after another took its name gets the hash. A world that
// exists keeps the name it was recorded with: callers look that up first.
func WorktreeAmong(branch string, branches []string, held func(name string) (branch string, ok bool)) string {
	short := WorktreeShort(branch)
	if short != fold(branch, '-') {
		return short // the fold is unusable: already hashed
	}
	if held != nil {
		if b, ok := held(short); ok && b != branch {
			return hashed(branch)
		}
	}
	if short != branch {
		for _, b := range branches {
			if b != branch && WorktreeShort(b) == short {
				return hashed(branch)
			}
		}
	}
	return short
}
