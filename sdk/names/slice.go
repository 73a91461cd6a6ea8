package names

import "strings"

// MaxSlice is the longest slice name: PostgreSQL's identifier limit, the
// tightest of the backends binky carves.
const MaxSlice = 63

// Slice returns the slice name of a worktree of a project:
// <project>_<worktree> with every '-' written '_', so it is 3 to MaxSlice
// bytes of [a-z0-9_]. It is written plainly only when that is unambiguous:
// the project is [a-z0-9]+ (a '-' in it would hide where the project ends),
// the worktree has the shape of a worktree name (IsWorktree) and does not
// start "golden-" (which would read as a golden template), and the whole
// fits. Otherwise it is the same folded text, cut, then "__" and a hash of
// both inputs: "my_app_feat_x__3f2a9c".
func Slice(project, worktree string) string {
	if plainProject(project) && IsWorktree(worktree) && !strings.HasPrefix(worktree, "golden-") {
		if s := project + "_" + replaceByte(worktree, '-', '_'); len(s) <= MaxSlice {
			return s
		}
	}
	return hashedSlice(fold(project+"_"+worktree, '_'), digest("slice", project, worktree))
}

// Golden returns the slice name of a project's golden template built for
// clone_from: <project>_golden_<cloneFrom>, under the same rules as Slice
// (plain when the project is [a-z0-9]+ and cloneFrom has the shape of a
// worktree name and the whole fits; else cut and hashed). No golden name is
// ever a worktree's slice name.
func Golden(project, cloneFrom string) string {
	if plainProject(project) && IsWorktree(cloneFrom) {
		if s := project + "_golden_" + replaceByte(cloneFrom, '-', '_'); len(s) <= MaxSlice {
			return s
		}
	}
	return hashedSlice(fold(project+"_golden_"+cloneFrom, '_'), digest("golden", project, cloneFrom))
}

// IsSlice reports whether s has the shape of a slice name: 3 to MaxSlice
// bytes of [a-z0-9_], holding at least one '_', starting and ending with a
// letter or digit. Every Slice and Golden result has it. The backend
// mappers are injective over this set.
func IsSlice(s string) bool {
	if len(s) < 3 || len(s) > MaxSlice || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	under := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_':
			under = true
		case !alnum(c):
			return false
		}
	}
	return under
}

// canon returns s when it has the shape of a slice name, else a slice name
// made from it (folded, cut, "__", hash). The backend mappers start here so
// they accept any string and still produce a valid backend name.
func canon(s string) string {
	if IsSlice(s) {
		return s
	}
	return hashedSlice(fold(s, '_'), digest("raw", s))
}

// hashedSlice joins a folded head, cut to fit, and a hash with "__". A
// folded head never holds "__", and a plain slice never does either, so a
// hashed name can never equal a plain one.
func hashedSlice(head, hash string) string {
	head = cut(head, MaxSlice-2-hashLen, '_')
	if head == "" {
		head = "s"
	}
	return head + "__" + hash
}

// plainProject reports whether a project name can start a plain slice name:
// [a-z0-9]+, so the first '_' of the slice ends it.
func plainProject(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if !alnum(p[i]) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}
