package hooks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/worktree"
)

// AddWorktree makes the worktree a WorktreeCreate hook was asked for: at
// path, on branch (checked out when it exists, else made from base, or
// HEAD when base is ""), in the repository dir is in. A worktree already
// at path is reused (a hook run twice). The worktree is marked as binky's
// (worktree.MarkMade). It reports whether it made one.
func AddWorktree(ctx context.Context, dir, path, branch, base string) (bool, error) {
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		return false, fmt.Errorf("add the worktree %s: %s is not in a git repository: %w", path, dir, err)
	}
	wts, err := repo.List(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range wts {
		if samePath(w.Path, path) {
			return false, nil
		}
	}
	if err := worktree.CheckBranch(ctx, branch); err != nil {
		return false, err
	}
	if strings.HasPrefix(base, "-") {
		return false, fmt.Errorf("add the worktree %s: base ref %q starts with '-'", path, base)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("add the worktree %s: %w", path, err)
	}
	args := []string{"worktree", "add", "-b", branch, "--", path}
	if base != "" {
		args = append(args, base)
	}
	if git(ctx, repo.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) == nil {
		args = []string{"worktree", "add", "--", path, branch}
	}
	if err := git(ctx, repo.Root, args...); err != nil {
		return false, fmt.Errorf("add the worktree %s on branch %s: %w", path, branch, err)
	}
	if err := worktree.MarkMade(path); err != nil {
		return true, err
	}
	return true, nil
}

// RemoveWorktree removes the worktree at path with git, changes and all
// (Claude Code asked the user before it calls WorktreeRemove). A path that
// is no worktree any more is not an error.
func RemoveWorktree(ctx context.Context, path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	repo, err := worktree.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("remove the worktree %s: %w", path, err)
	}
	if samePath(repo.Root, path) {
		return fmt.Errorf("remove the worktree %s: it is the repository's main worktree; binky never removes that", path)
	}
	if err := git(ctx, repo.Root, "worktree", "remove", "--force", "--", path); err != nil {
		return fmt.Errorf("remove the worktree %s: %w", path, err)
	}
	return nil
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return fmt.Errorf("git %s: %s", args[0]+" "+args[1], msg)
		}
		return fmt.Errorf("git %s: %w", strings.Join(args[:2], " "), err)
	}
	return nil
}

func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
