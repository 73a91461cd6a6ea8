package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MainRoot returns the main worktree of the repository whose worktree dir
// is the top of, reading git's files only (no git process): dir itself for
// a main worktree (dir/.git is a directory); for a linked worktree
// (dir/.git is a file "gitdir: <common>/worktrees/<name>"), the directory
// that holds the common git dir. It returns "" when dir is not the top of
// a worktree or the main repository is bare.
func MainRoot(dir string) string {
	dotgit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		return dir
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	common := filepath.Dir(filepath.Dir(gitdir)) // <common>/worktrees/<name>
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	common = filepath.Clean(common)
	if filepath.Base(common) != ".git" {
		return "" // a bare repository has no main worktree
	}
	return filepath.Dir(common)
}

// Ignored reports whether git ignores path (relative to dir, or absolute)
// in the worktree dir is in: such a file is not in a new worktree unless
// something copies it there. A path git cannot judge is not ignored.
func Ignored(ctx context.Context, dir, path string) bool {
	_, err := git(ctx, dir, "check-ignore", "-q", "--no-index", "--", path)
	return err == nil
}

// Branches lists the repository's local branches (short names).
func (r *Repo) Branches(ctx context.Context) ([]string, error) {
	dir := r.Dir
	if dir == "" {
		dir = r.Root
	}
	out, err := git(ctx, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads")
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	return lines(out), nil
}
