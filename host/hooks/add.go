package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/worktree"
)

// AddWorktree makes the worktree a WorktreeCreate hook was asked for: at
// path, on branch (checked out when it exists, else made from base, or
// HEAD when base is ""), in p's repository. path must pass NewWorktree
// (<top>/.claude/worktrees/<name>); anything else is refused before git
// runs. A worktree already at path is reused (a hook run twice). The
// worktree is marked as binky's (worktree.MarkMade). It reports whether
// it made one.
func (p *Project) AddWorktree(ctx context.Context, path, branch, base string) (bool, error) {
	if err := p.NewWorktree(ctx, path); err != nil {
		return false, err
	}
	path = filepath.Clean(path)
	wts, err := p.repo.List(ctx)
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
	if git(ctx, p.repo.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) == nil {
		args = []string{"worktree", "add", "--", path, branch}
	}
	if err := git(ctx, p.repo.Root, args...); err != nil {
		return false, fmt.Errorf("add the worktree %s on branch %s: %w", path, branch, err)
	}
	if err := worktree.MarkMade(path); err != nil {
		return true, err
	}
	return true, nil
}

// RemoveWorktree removes the worktree at path with git, changes and all
// (Claude Code asked the user before it calls WorktreeRemove). path must
// pass RemovableWorktree (the top of a worktree of p's repository, not
// the main one); anything else is refused before git runs. A path that
// does not exist is not an error: there is nothing to remove.
func (p *Project) RemoveWorktree(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	top, err := p.RemovableWorktree(ctx, path)
	if err != nil {
		return err
	}
	if err := git(ctx, p.repo.Root, "worktree", "remove", "--force", "--", top); err != nil {
		return fmt.Errorf("remove the worktree %s: %w", path, err)
	}
	return nil
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = worktree.GitEnv()
	cmd.WaitDelay = 5 * time.Second
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

// samePath reports whether a and b name the same file: equal when
// cleaned, or when both exist and resolve to one path.
func samePath(a, b string) bool {
	if pathEqual(a, b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && pathEqual(ra, rb)
}
