package worktree

import (
	"path/filepath"
	"strings"
)

// Worktree is one working tree of a repository, as git lists it.
type Worktree struct {
	// Path is the worktree's top directory.
	Path string
	// Branch is the short name of the branch checked out ("feat/login"),
	// empty when HEAD is detached or the entry is a bare repository.
	Branch string
	// Head is the commit checked out, empty on a branch with no commits.
	Head string
	// Bare marks the entry of a bare main repository.
	Bare bool
	// Detached marks a worktree whose HEAD is no branch.
	Detached bool
	// Locked marks a worktree locked with `git worktree lock`.
	Locked bool
	// Prunable marks a registered worktree whose directory is gone.
	Prunable bool
}

// parseList parses `git worktree list --porcelain -z`: NUL-terminated
// "key value" attributes, each record begun by a "worktree <path>"
// attribute and ended by an empty one. Unknown attributes are ignored, as
// git's documentation asks, and attributes before any record are dropped.
func parseList(out string) []Worktree {
	var wts []Worktree
	var cur *Worktree
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(f, " ")
		if key == "worktree" {
			if val == "" {
				cur = nil
				continue
			}
			wts = append(wts, Worktree{Path: filepath.Clean(filepath.FromSlash(val))})
			cur = &wts[len(wts)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			if strings.Trim(val, "0") != "" {
				cur.Head = val
			}
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return wts
}
