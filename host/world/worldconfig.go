package world

import (
	"path/filepath"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
)

// Config loads the config a recorded world was brought up with.
func (e *Engine) Config(rec *registry.Worktree) (*config.Config, error) { return e.worldConfig(rec) }

func (e *Engine) worldConfig(rec *registry.Worktree) (*config.Config, error) {
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
		cfg, err := LoadConfig(p)
		if err == nil {
			return cfg, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
