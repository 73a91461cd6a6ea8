package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/binkyhq/binky/host/config"
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

func registryPath(e *Env) string { return filepath.Join(e.Home, "binky.db") }

// worldConfig loads the binky.toml w was last brought up with (or, when the
// registry does not say, the one in its worktree); nil when it cannot be
// read or has errors: doctor then checks what it can without it.
func worldConfig(ctx context.Context, w world) *config.Config {
	path := w.Config
	if path == "" && w.Path != "" {
		path = filepath.Join(w.Path, config.FileName)
	}
	if path == "" {
		return nil
	}
	return loadQuiet(ctx, path)
}

// loadQuiet loads a binky.toml, nil on any error.
func loadQuiet(ctx context.Context, path string) *config.Config {
	cfg, _, err := config.LoadContext(ctx, path)
	if err != nil {
		return nil
	}
	return cfg
}
