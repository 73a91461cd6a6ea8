package world

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

// checkOwner refuses a repository that claims a project name another
// repository's worlds hold: a world belongs to one repository, and two
// clones with one [project] name would otherwise act on each other's
// worlds.
func (e *Engine) checkOwner(ctx context.Context, project, root string) error {
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Project != project || rec.Repo == "" || SamePath(rec.Repo, root) {
			continue
		}
		hint := fmt.Sprintf("give this repository its own name ([project] name in %s), or remove the other repository's worlds first (binky status lists them)", filepath.Join(root, "binky.toml"))
		if _, err := os.Stat(rec.Repo); err != nil {
			hint = fmt.Sprintf("that repository is gone from disk; remove its worlds (binky remove %s --force, and the others binky status lists), or give this repository its own name ([project] name in %s)", rec.Name, filepath.Join(root, "binky.toml"))
		}
		return api.Errorf(api.CodeConflict, "project %q belongs to the repository at %s (world %s), not to %s: %s", project, rec.Repo, rec.Name, root, hint)
	}
	return nil
}

// SamePath compares two directories after cleaning and resolving links.
func SamePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// ensureWorktree finds or creates the worktree a request means.
func (e *Engine) ensureWorktree(ctx context.Context, repo *worktree.Repo, a api.UpArgs, cfg *config.Config) (worktree.Worktree, bool, error) {
	if a.Branch == "" {
		wt, err := worktree.Current(ctx, a.Dir)
		if err != nil {
			return wt, false, api.Wrap(api.CodeInvalid, err)
		}
		return wt, false, nil
	}
	dir := cfg.Project.WorktreeDir
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(repo.Root, dir)
	}
	branch, wt, err := e.branchOfName(ctx, repo, cfg.Project.Name, a)
	if err != nil || wt != nil {
		if wt == nil {
			return worktree.Worktree{}, false, err
		}
		return *wt, false, err
	}
	m := e.repoLock(repo.Root)
	if err := m.Lock(ctx, nil, "up", branch); err != nil {
		return worktree.Worktree{}, false, api.Errorf(api.CodeConflict, "add the worktree of %s: %v", branch, err)
	}
	defer m.Unlock()
	wt2, created, err := repo.Ensure(ctx, branch, dir)
	wt = &wt2
	if err != nil {
		return *wt, false, api.Wrap(api.CodeInvalid, err)
	}
	return *wt, created, nil
}

// branchOfName is the branch an up of name means. A name that is no
// branch of the repository but is the name of one of the project's worlds
// (the name down, env and remove accept: feat-c for feat/c) means that
// world's branch, so an up never forks a new branch beside it; with
// NewBranch the name is a new branch all the same. A world with no branch
// (a detached HEAD) is its worktree (wt).
func (e *Engine) branchOfName(ctx context.Context, repo *worktree.Repo, project string, a api.UpArgs) (branch string, wt *worktree.Worktree, err error) {
	name := a.Branch
	if a.NewBranch {
		return name, nil, nil
	}
	branches, err := repo.Branches(ctx)
	if err != nil {
		return "", nil, api.Errorf(api.CodeFailed, "find branch %s: %w", name, err)
	}
	for _, b := range branches {
		if b == name {
			return name, nil, nil
		}
	}
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		return "", nil, err
	}
	for _, r := range recs {
		if r.Project != project || r.Name != name || (r.Repo != "" && !SamePath(r.Repo, repo.Root)) {
			continue
		}
		if r.Branch != "" {
			return r.Branch, nil, nil
		}
		cur, err := worktree.Current(ctx, r.Path)
		if err != nil {
			return "", nil, api.Errorf(api.CodeConflict, "%s is the world of the worktree %s, which has no branch and cannot be opened (%v): run binky up in it, or pass --new-branch to make a new branch %s", name, r.Path, err, name)
		}
		return "", &cur, nil
	}
	return name, nil, nil
}

// worktreeName is the world's name: from its branch, or its directory when
// it has none (detached HEAD).
func worktreeName(wt worktree.Worktree) string {
	if wt.Branch != "" {
		return names.Worktree(wt.Branch)
	}
	return names.Worktree(filepath.Base(wt.Path))
}

// branchWorldName is the name of the world of a branch: the name recorded
// for the branch in this project when it has a world (recorded names
// never change), else the branch folded, with the hash suffix only when
// another branch of the repository or another world claims the same name
// (names.WorktreeAmong). Without a branch (detached HEAD) it is
// worktreeName.
func (e *Engine) branchWorldName(ctx context.Context, repo *worktree.Repo, project string, wt worktree.Worktree) (string, error) {
	if wt.Branch == "" {
		return worktreeName(wt), nil
	}
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	held := map[string]string{}
	for _, r := range recs {
		if r.Project != project {
			continue
		}
		if r.Branch == wt.Branch && (SamePath(r.Path, wt.Path) || r.Repo == "" || SamePath(r.Repo, repo.Root)) {
			return r.Name, nil
		}
		held[r.Name] = r.Branch
	}
	branches, err := repo.Branches(ctx)
	if err != nil {
		return "", api.Errorf(api.CodeFailed, "name the world of %s: %w", wt.Branch, err)
	}
	name := names.WorktreeAmong(wt.Branch, branches, func(n string) (string, bool) { b, ok := held[n]; return b, ok })
	if b, ok := held[name]; ok && b != wt.Branch {
		return "", api.Errorf(api.CodeConflict, "branch %s would be named %s, which world of branch %s holds: rename one of the branches", wt.Branch, name, b)
	}
	return name, nil
}

// LoadConfig reads a binky.toml, turning its errors into the same lines
// `binky check` prints.
func LoadConfig(path string) (*config.Config, error) {
	return LoadConfigContext(context.Background(), path)
}

// LoadConfigContext is loadConfig, abandoned when ctx ends (a caller that
// went away). config's size, depth and entry limits bound what parsing a
// worktree's file can cost the daemon.
func LoadConfigContext(ctx context.Context, path string) (*config.Config, error) {
	cfg, diags, err := config.LoadContext(ctx, path)
	if err != nil {
		return nil, api.Wrap(api.CodeInvalid, err)
	}
	if diags.HasErrors() {
		var lines []string
		for _, dg := range diags {
			if dg.Severity == config.SeverityError {
				lines = append(lines, dg.String())
			}
		}
		return nil, api.Errorf(api.CodeInvalid, "binky.toml has errors (run `binky check`):\n%s", strings.Join(lines, "\n"))
	}
	return cfg, nil
}
