package daemon

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

// findWorld resolves a worktree name or branch to one recorded world. When
// several projects have a world of that name, the project of the caller's
// directory wins; otherwise the name is ambiguous and the error says so.
func (d *Daemon) findWorld(ctx context.Context, ref api.WorldRef) (*registry.Worktree, error) {
	if ref.Name == "" {
		return nil, errorf(api.CodeInvalid, "which worktree? give its name or branch (binky status lists them)")
	}
	found, err := d.reg.FindWorktree(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		if folded := names.Worktree(ref.Name); folded != ref.Name {
			if found, err = d.reg.FindWorktree(ctx, folded); err != nil {
				return nil, err
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, errorf(api.CodeNotFound, "no world named %q (binky status lists them; binky up %s creates it)", ref.Name, ref.Name)
	case 1:
		return found[0], nil
	}
	if p := projectOf(ctx, ref.Dir); p != "" {
		for _, w := range found {
			if w.Project == p {
				return w, nil
			}
		}
	}
	var projects []string
	for _, w := range found {
		projects = append(projects, w.Project)
	}
	return nil, errorf(api.CodeInvalid, "%q names a world in several projects (%s): run the command inside the project's repository", ref.Name, strings.Join(projects, ", "))
}

// lockWorld finds a world and takes its lock, then reads it again: an op
// that waited for the lock sees what the previous op left (or that it
// removed the world).
func (d *Daemon) lockWorld(ctx context.Context, ref api.WorldRef) (*registry.Worktree, func(), error) {
	rec, err := d.findWorld(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	m := d.worldLock(rec.Project, rec.Name)
	m.Lock()
	fresh, err := d.reg.WorktreeByID(ctx, rec.ID)
	if err != nil {
		m.Unlock()
		if registry.IsNotFound(err) {
			return nil, nil, errorf(api.CodeNotFound, "world %s was removed meanwhile", rec.Name)
		}
		return nil, nil, err
	}
	return fresh, m.Unlock, nil
}

// projectOf is the project name of the repository dir is in, or "".
func projectOf(ctx context.Context, dir string) string {
	if dir == "" {
		return ""
	}
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		return ""
	}
	cfg, _, err := config.Load(filepath.Join(repo.Root, "binky.toml"))
	if err != nil || cfg == nil {
		return ""
	}
	return cfg.Project.Name
}

// worldConfig loads the config a recorded world was brought up with.
func (d *Daemon) worldConfig(rec *registry.Worktree) (*config.Config, error) {
	paths := []string{filepath.Join(rec.Path, "binky.toml"), rec.ConfigPath}
	var lastErr error
	for _, p := range paths {
		if p == "" {
			continue
		}
		cfg, err := loadConfig(p)
		if err == nil {
			return cfg, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
