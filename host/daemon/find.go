package daemon

import (
	"context"
	"path/filepath"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/world"
)

// findWorld is world.Find over the daemon's registry: every verb resolves
// a world's name by the same rules.
func (d *Daemon) findWorld(ctx context.Context, ref api.WorldRef) (*registry.Worktree, error) {
	return world.Find(ctx, d.reg, ref)
}

// worldConfig loads the config a recorded world was brought up with.
func (d *Daemon) worldConfig(rec *registry.Worktree) (*config.Config, error) {
	// The worktree's own file, the one it was brought up with, then the
	// main repository's: a remove cut short after the worktree went still
	// finds the adapters of the slices it has left to destroy.
	paths := []string{filepath.Join(rec.Path, "binky.toml"), rec.ConfigPath}
	if rec.Repo != "" {
		paths = append(paths, filepath.Join(rec.Repo, "binky.toml"))
	}
	var lastErr error
	for _, p := range paths {
		if p == "" {
			continue
		}
		cfg, err := world.LoadConfig(p)
		if err == nil {
			return cfg, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
