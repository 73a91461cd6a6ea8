package world

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

// Lookup is what Find reads of the registry: the daemon's, or one binkyd
// logs opened read-only (registry.OpenReadOnly).
type Lookup interface {
	FindWorktree(ctx context.Context, nameOrBranch string) ([]*registry.Worktree, error)
	Worktrees(ctx context.Context) ([]*registry.Worktree, error)
}

// Find resolves a worktree name or branch to one recorded world; with no
// name, the world of the worktree the caller's directory (ref.Dir) is in.
// Every verb finds its world through it: the daemon's, and binkyd logs
// reading the registry itself when no daemon answers.
//
// A name resolves inside one project: the one ref.Project names, else the
// one of the repository the caller stands in (and only that repository's
// worlds: a second clone claiming the same project name is refused). Only
// a caller outside any binky repository, naming no project, is matched
// against every project: a name that exists in one works, one that exists
// in several is refused with the project/worktree candidates. So no verb
// ever reaches a world of another project than the caller's unless the
// caller names that project.
func Find(ctx context.Context, reg Lookup, ref api.WorldRef) (*registry.Worktree, error) {
	if ref.Name == "" {
		return worldHere(ctx, reg, ref)
	}
	found, err := reg.FindWorktree(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		if folded := names.Worktree(ref.Name); folded != ref.Name {
			if found, err = reg.FindWorktree(ctx, folded); err != nil {
				return nil, err
			}
		}
	}
	project, root := ref.Project, ""
	if project == "" {
		all, err := reg.Worktrees(ctx)
		if err != nil {
			return nil, err
		}
		root, project = callerRepo(ctx, ref.Dir, all)
	}
	if project == "" {
		return pickAnywhere(ref.Name, found)
	}
	var in []*registry.Worktree
	var others []string
	var otherRepo *registry.Worktree
	for _, w := range found {
		switch {
		case w.Project != project:
			others = append(others, w.Project+"/"+w.Name)
		case root != "" && w.Repo != "" && !SamePath(w.Repo, root):
			// A world belongs to one repository: standing in a repository
			// of project P, a world of P recorded for another repository
			// (a second clone with the same [project] name) is not the
			// caller's.
			otherRepo = w
		default:
			in = append(in, w)
		}
	}
	switch {
	case len(in) == 1:
		return in[0], nil
	case len(in) > 1:
		// Two names of one project fold alike only through a branch and a
		// worktree name; the exact worktree name wins.
		for _, w := range in {
			if w.Name == ref.Name {
				return w, nil
			}
		}
		return in[0], nil
	case otherRepo != nil:
		return nil, api.Errorf(api.CodeConflict, "world %s of project %q belongs to the repository at %s, not to %s, which claims the same project name; run the command in %s, or give this repository its own [project] name", otherRepo.Name, project, otherRepo.Repo, root, otherRepo.Repo)
	}
	where := "project " + strconv.Quote(project)
	if ref.Project == "" {
		where += " (the repository you are in)"
	}
	hint := "binky status lists every world; binky up " + ref.Name + " creates it"
	if len(others) > 0 {
		hint = "other projects have " + strings.Join(others, ", ") + "; pass --project to act on one of them"
	}
	return nil, api.Errorf(api.CodeNotFound, "%s has no world named %q (%s)", where, ref.Name, hint)
}

// pickAnywhere is Find for a caller outside any binky repository
// who names no project: found must hold exactly one world.
func pickAnywhere(name string, found []*registry.Worktree) (*registry.Worktree, error) {
	switch len(found) {
	case 0:
		return nil, api.Errorf(api.CodeNotFound, "no world named %q (binky status lists them; binky up %s in a repository creates it)", name, name)
	case 1:
		return found[0], nil
	}
	var cands []string
	for _, w := range found {
		cands = append(cands, w.Project+"/"+w.Name)
	}
	sort.Strings(cands)
	return nil, api.Errorf(api.CodeInvalid, "%q names worlds in several projects (%s): run the command inside the project's repository, or pass --project", name, strings.Join(cands, ", "))
}

// worldHere is the world of the worktree dir is in, as `binky up` with no
// branch would bring up.
func worldHere(ctx context.Context, reg Lookup, ref api.WorldRef) (*registry.Worktree, error) {
	if ref.Dir == "" {
		return nil, api.Errorf(api.CodeInvalid, "which worktree? give its name or branch (binky status lists them)")
	}
	wt, err := worktree.Current(ctx, ref.Dir)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalid, "which worktree? %s is not inside a worktree of a git repository, so give the worktree's name or branch (binky status lists them): %w", ref.Dir, err)
	}
	all, err := reg.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range all {
		if (ref.Project == "" || w.Project == ref.Project) && SamePath(w.Path, wt.Path) {
			return w, nil
		}
	}
	return nil, api.Errorf(api.CodeNotFound, "the worktree at %s has no world yet (binky up brings it up; binky status lists the worlds)", wt.Path)
}

// repoOf is the main worktree and project name of the repository dir is
// in, or "", "".
func repoOf(ctx context.Context, dir string) (root, project string) {
	if dir == "" {
		return "", ""
	}
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		return "", ""
	}
	cfg, _, err := config.LoadContext(ctx, filepath.Join(repo.Root, "binky.toml"))
	if err != nil || cfg == nil {
		return "", ""
	}
	return repo.Root, cfg.Project.Name
}

// callerRepo is repoOf without running git in the common case: a dir
// inside one of worlds' repository or worktree, with no other .git between
// them, is in that world's repository. Anything else asks git (repoOf).
func callerRepo(ctx context.Context, dir string, worlds []*registry.Worktree) (root, project string) {
	for _, w := range worlds {
		if dir == "" || w.Repo == "" {
			continue
		}
		if !inside(dir, w.Repo) && !inside(dir, w.Path) {
			continue
		}
		cfg, _, err := config.LoadContext(ctx, filepath.Join(w.Repo, "binky.toml"))
		if err != nil || cfg == nil {
			return "", ""
		}
		return w.Repo, cfg.Project.Name
	}
	return repoOf(ctx, dir)
}

// inside reports whether dir lies in the git work tree at top: top has a
// .git and no directory from dir up to top (excluded) has one of its own
// (a nested repository or worktree).
func inside(dir, top string) bool {
	if top == "" {
		return false
	}
	dir, top = filepath.Clean(dir), filepath.Clean(top)
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(top, ".git")); err != nil {
		return false
	}
	for d := dir; d != top; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return false
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
	return true
}

var _ Lookup = (*registry.Registry)(nil)
