package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/binkyhq/binky/sdk/names"
)

// ErrInvalidBranch is returned for a branch name git would not accept.
var ErrInvalidBranch = errors.New("not a valid git branch name")

// CheckBranch returns an error wrapping ErrInvalidBranch, naming the
// branch, when git would refuse it as a branch name (git check-ref-format
// --branch), or when it starts with '-' or uses the @{…} syntax, which git
// would read as an option or another ref.
func CheckBranch(ctx context.Context, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") || strings.Contains(branch, "@{") {
		return fmt.Errorf("branch %q: %w", branch, ErrInvalidBranch)
	}
	out, err := git(ctx, "", "check-ref-format", "--branch", branch)
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			return fmt.Errorf("branch %q: %w (git check-ref-format)", branch, ErrInvalidBranch)
		}
		return fmt.Errorf("check branch %q: %w", branch, err)
	}
	if strings.TrimSpace(out) != branch {
		return fmt.Errorf("branch %q: %w (git reads it as %q)", branch, ErrInvalidBranch, strings.TrimSpace(out))
	}
	return nil
}

// Ensure returns the worktree for branch, creating it when needed:
//
//   - the worktree that already has branch checked out, wherever it is, is
//     reused (created is false);
//   - otherwise a worktree is added at <dir>/<names.Worktree(branch)>
//     (dir "" means DefaultDir), checking out the local branch if there is
//     one, else a new local branch tracking <remote>/<branch> from origin
//     or from the one remote that has it, else a new branch from the HEAD
//     of the worktree the repository was opened in (Dir, or Root).
//
// The branch is checked first (CheckBranch). A registered worktree whose
// directory has gone is pruned and made again. Ensure does not fetch: a
// remote branch must already be known locally. Calls for different
// branches may run at once; calls for the same branch should be serialized
// by the caller (a losing racer that finds the winner's worktree returns it).
func (r *Repo) Ensure(ctx context.Context, branch, dir string) (wt Worktree, created bool, err error) {
	if err := CheckBranch(ctx, branch); err != nil {
		return Worktree{}, false, err
	}
	unlock, err := r.lock(ctx, true)
	if err != nil {
		return Worktree{}, false, fmt.Errorf("ensure the worktree of branch %q: %w", branch, err)
	}
	defer unlock()
	wt, ok, err := r.forBranch(ctx, branch)
	if err != nil {
		return Worktree{}, false, err
	}
	if ok && !wt.Prunable {
		return wt, false, nil
	}
	if ok {
		if _, err := git(ctx, r.Root, "worktree", "prune"); err != nil {
			return Worktree{}, false, fmt.Errorf("prune the missing worktree %s of branch %q: %w", wt.Path, branch, err)
		}
	}
	if dir == "" {
		dir = r.DefaultDir()
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return Worktree{}, false, fmt.Errorf("create worktree for branch %q: %w", branch, err)
	}
	path := filepath.Join(dir, names.Worktree(branch))
	args, err := r.addArgs(ctx, branch, path)
	if err != nil {
		return Worktree{}, false, fmt.Errorf("create worktree for branch %q: %w", branch, err)
	}
	from := r.Dir
	if from == "" {
		from = r.Root
	}
	if _, err := git(ctx, from, args...); err != nil {
		return Worktree{}, false, fmt.Errorf("create worktree for branch %q at %s: %w", branch, path, err)
	}
	wt, ok, err = r.forBranch(ctx, branch)
	if err != nil {
		return Worktree{}, false, err
	}
	if !ok {
		return Worktree{}, false, fmt.Errorf("create worktree for branch %q at %s: git added it but does not list it", branch, path)
	}
	return wt, true, nil
}

// addArgs chooses how to add the worktree at path: from the local branch,
// from a remote-tracking branch, or as a new branch from HEAD.
func (r *Repo) addArgs(ctx context.Context, branch, path string) ([]string, error) {
	if _, err := git(ctx, r.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}"); err == nil {
		return []string{"worktree", "add", "--", path, branch}, nil
	}
	remote, err := r.remoteFor(ctx, branch)
	if err != nil {
		return nil, err
	}
	if remote != "" {
		ref := "refs/remotes/" + remote + "/" + branch
		return []string{"worktree", "add", "--track", "-b", branch, "--", path, ref}, nil
	}
	return []string{"worktree", "add", "-b", branch, "--", path, "HEAD"}, nil
}

// remoteFor returns the remote whose remote-tracking branches hold branch:
// origin when it does, else the only remote that does, else "". Two or
// more remotes other than origin holding it is an error naming them.
func (r *Repo) remoteFor(ctx context.Context, branch string) (string, error) {
	out, err := git(ctx, r.Root, "remote")
	if err != nil {
		return "", fmt.Errorf("list remotes: %w", err)
	}
	remotes := lines(out)
	if len(remotes) == 0 {
		return "", nil
	}
	want := map[string]string{}
	args := []string{"for-each-ref", "--format=%(refname)"}
	for _, rm := range remotes {
		ref := "refs/remotes/" + rm + "/" + branch
		want[ref] = rm
		args = append(args, ref)
	}
	out, err = git(ctx, r.Root, args...)
	if err != nil {
		return "", fmt.Errorf("find remote branches named %q: %w", branch, err)
	}
	var have []string
	for _, ref := range lines(out) {
		if rm, ok := want[ref]; ok {
			have = append(have, rm)
		}
	}
	slices.Sort(have)
	have = slices.Compact(have)
	switch {
	case len(have) == 0:
		return "", nil
	case slices.Contains(have, "origin"):
		return "origin", nil
	case len(have) == 1:
		return have[0], nil
	}
	return "", fmt.Errorf("branch %q is on remotes %s and none is origin; create the local branch from one first (git branch --track %s %s/%s)",
		branch, strings.Join(have, ", "), branch, have[0], branch)
}
