package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// DirtyError is returned by Remove for a worktree with uncommitted
// changes.
type DirtyError struct {
	// Path is the worktree's directory.
	Path string
	// Changes are `git status --porcelain` lines: " M file", "?? new"…
	Changes []string
}

// maxListed bounds how many changes the error message lists.
const maxListed = 10

func (e *DirtyError) Error() string {
	var listed []string
	for _, c := range e.Changes[:min(len(e.Changes), maxListed)] {
		listed = append(listed, strings.TrimSpace(c))
	}
	more := ""
	if len(e.Changes) > maxListed {
		more = fmt.Sprintf(" and %d more", len(e.Changes)-maxListed)
	}
	return fmt.Sprintf("worktree %s has uncommitted changes (%s%s); commit or stash them, or remove with --force",
		e.Path, strings.Join(listed, ", "), more)
}

// Dirty returns the uncommitted changes of the worktree at path, one `git
// status --porcelain` line each, untracked files included (ignored ones
// are not); none means it is clean.
func (r *Repo) Dirty(ctx context.Context, path string) ([]string, error) {
	wt, err := r.lookupLocked(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("check worktree %s for changes: %w", path, err)
	}
	return dirty(ctx, wt.Path)
}

// lookupLocked is lookup under the shared lock.
func (r *Repo) lookupLocked(ctx context.Context, path string) (Worktree, error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return Worktree{}, err
	}
	defer unlock()
	return r.lookup(ctx, path)
}

func dirty(ctx context.Context, path string) ([]string, error) {
	out, err := git(ctx, path, "--no-optional-locks", "-c", "core.quotePath=false",
		"status", "--porcelain=v1", "--untracked-files=normal")
	if err != nil {
		return nil, fmt.Errorf("check worktree %s for changes: %w", path, err)
	}
	return lines(out), nil
}

// Head returns the commit checked out in the worktree at path (empty on a
// branch with no commits yet) and whether it has uncommitted changes.
func (r *Repo) Head(ctx context.Context, path string) (commit string, isDirty bool, err error) {
	wt, err := r.lookupLocked(ctx, path)
	if err != nil {
		return "", false, fmt.Errorf("read the head of worktree %s: %w", path, err)
	}
	changes, err := dirty(ctx, wt.Path)
	if err != nil {
		return "", false, err
	}
	return wt.Head, len(changes) > 0, nil
}

// CheckRemove says whether Remove(path, force) would refuse, without
// changing anything: the same checks, in the same order, with the same
// errors. A caller that must destroy other things along with the worktree
// asks first, so a refusal leaves everything as it was. nil also means the
// worktree is already gone.
func (r *Repo) CheckRemove(ctx context.Context, path string, force bool) error {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	defer unlock()
	_, gone, err := r.removable(ctx, path, force)
	if gone {
		return nil
	}
	return err
}

// removable looks path up and applies Remove's refusals. gone reports a
// path that is neither a worktree nor an existing directory.
func (r *Repo) removable(ctx context.Context, path string, force bool) (wt Worktree, gone bool, err error) {
	wt, err = r.lookup(ctx, path)
	if errors.Is(err, ErrNotWorktree) {
		if _, statErr := os.Stat(path); errors.Is(statErr, fs.ErrNotExist) {
			return wt, true, nil
		}
	}
	if err != nil {
		return wt, false, fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if samePath(wt.Path, r.Root) {
		return wt, false, fmt.Errorf("remove worktree %s: it is the main worktree of the repository, which binky never removes", path)
	}
	if wt.Prunable {
		return wt, false, nil
	}
	if wt.Locked && !force {
		return wt, false, fmt.Errorf("remove worktree %s: it is locked (git worktree lock); unlock it (git worktree unlock %s) or remove with --force", path, wt.Path)
	}
	if !force {
		changes, err := dirty(ctx, wt.Path)
		if err != nil {
			return wt, false, fmt.Errorf("remove worktree %s: %w", path, err)
		}
		if len(changes) > 0 {
			return wt, false, &DirtyError{Path: wt.Path, Changes: changes}
		}
	}
	return wt, false, nil
}

// Remove deletes the worktree at path and its registration; the branch
// stays. It refuses the main worktree, and a worktree with uncommitted
// changes (a *DirtyError listing them) unless force, which also overrides
// a lock. A path that is neither a worktree nor an existing directory is
// already removed, so Remove succeeds: a retry after a partial failure
// finishes the job. A registered worktree whose directory is gone is
// pruned.
func (r *Repo) Remove(ctx context.Context, path string, force bool) error {
	unlock, err := r.lock(ctx, true)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	defer unlock()
	wt, gone, err := r.removable(ctx, path, force)
	if gone {
		return nil
	}
	if err != nil {
		return err
	}
	if wt.Prunable {
		if _, err := git(ctx, r.Root, "worktree", "prune"); err != nil {
			return fmt.Errorf("remove worktree %s, whose directory is gone: %w", path, err)
		}
		return nil
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force", "--force")
	}
	if _, err := git(ctx, r.Root, append(args, "--", wt.Path)...); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	return nil
}
