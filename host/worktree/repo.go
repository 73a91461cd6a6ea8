package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotWorktree is returned when a path is not a worktree of the
// repository.
var ErrNotWorktree = errors.New("not a worktree of this repository")

// Repo is a git repository with its worktrees.
type Repo struct {
	// Root is the main worktree's directory (for a bare repository, the
	// repository directory itself).
	Root string
	// Bare marks a bare main repository.
	Bare bool
	// CommonDir is the git directory all worktrees share (Root/.git for
	// a repository that is not bare).
	CommonDir string
	// Dir is the top of the worktree Open was called in, Root when it was
	// called in the main worktree, or empty when it was called outside
	// any worktree (inside a bare repository). A new branch starts at its
	// HEAD.
	Dir string
}

// Open finds the repository that dir is in: dir may be anywhere inside the
// main worktree or one of its linked worktrees, and Root is always the main
// worktree.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	out, err := git(ctx, abs, "rev-parse", "--path-format=absolute", "--git-common-dir", "--is-inside-work-tree")
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
	}
	ls := lines(out)
	if len(ls) != 2 {
		return nil, fmt.Errorf("open git repository at %s: git rev-parse printed %q", abs, out)
	}
	r := &Repo{CommonDir: filepath.Clean(filepath.FromSlash(ls[0]))}
	if ls[1] == "true" {
		top, err := git(ctx, abs, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
		}
		r.Dir = filepath.Clean(filepath.FromSlash(strings.TrimSpace(top)))
	}
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
	}
	wts, err := list(ctx, abs)
	unlock()
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
	}
	if len(wts) == 0 {
		return nil, fmt.Errorf("open git repository at %s: git worktree list printed no main worktree", abs)
	}
	r.Root, r.Bare = wts[0].Path, wts[0].Bare
	return r, nil
}

// DefaultDir is where Ensure creates worktrees when given no directory: a
// sibling of the main worktree named after it, <parent>/<name>.worktrees.
func (r *Repo) DefaultDir() string {
	return filepath.Join(filepath.Dir(r.Root), filepath.Base(r.Root)+".worktrees")
}

// List returns every worktree of the repository: the main one first, then
// the others in git's order (by path).
func (r *Repo) List(ctx context.Context) ([]Worktree, error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("list worktrees of %s: %w", r.Root, err)
	}
	defer unlock()
	return r.list(ctx)
}

// list is List without the lock, for callers that hold it.
func (r *Repo) list(ctx context.Context) ([]Worktree, error) {
	wts, err := list(ctx, r.Root)
	if err != nil {
		return nil, fmt.Errorf("list worktrees of %s: %w", r.Root, err)
	}
	return wts, nil
}

func list(ctx context.Context, dir string) ([]Worktree, error) {
	out, err := git(ctx, dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseList(out), nil
}

// ForBranch returns the worktree that has branch checked out, and false
// when none has.
func (r *Repo) ForBranch(ctx context.Context, branch string) (Worktree, bool, error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return Worktree{}, false, fmt.Errorf("find the worktree of branch %q: %w", branch, err)
	}
	defer unlock()
	return r.forBranch(ctx, branch)
}

// forBranch is ForBranch without the lock, for callers that hold it.
func (r *Repo) forBranch(ctx context.Context, branch string) (Worktree, bool, error) {
	wts, err := r.list(ctx)
	if err != nil {
		return Worktree{}, false, err
	}
	for _, w := range wts {
		if w.Branch == branch && !w.Bare {
			return w, true, nil
		}
	}
	return Worktree{}, false, nil
}

// Current returns the worktree that dir is in: what `binky up` with no
// branch brings up.
func Current(ctx context.Context, dir string) (Worktree, error) {
	r, err := Open(ctx, dir)
	if err != nil {
		return Worktree{}, err
	}
	if r.Dir == "" {
		return Worktree{}, fmt.Errorf("find the worktree at %s: it is inside a bare repository, not a worktree; cd into a worktree or name a branch", dir)
	}
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return Worktree{}, fmt.Errorf("find the worktree at %s: %w", dir, err)
	}
	defer unlock()
	return r.lookup(ctx, r.Dir)
}

// lookup returns the worktree whose top directory is path. The caller
// holds the lock.
func (r *Repo) lookup(ctx context.Context, path string) (Worktree, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	wts, err := r.list(ctx)
	if err != nil {
		return Worktree{}, err
	}
	for _, w := range wts {
		if !w.Bare && samePath(w.Path, path) {
			return w, nil
		}
	}
	return Worktree{}, fmt.Errorf("%s: %w %s", path, ErrNotWorktree, r.Root)
}

// samePath reports whether two paths name the same directory, after
// cleaning and, when they differ, resolving symbolic links (a temporary
// directory reached through /var and /private/var, say).
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if pathEqual(a, b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && pathEqual(ra, rb)
}

// pathEqual compares cleaned paths, ignoring case where the file system
// usually does (Windows).
func pathEqual(a, b string) bool {
	if filepath.Separator == '\\' {
		return strings.EqualFold(a, b)
	}
	return a == b
}
