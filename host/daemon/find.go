package daemon

import (
	"context"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/world"
)

// findWorld is world.Find over the daemon's registry: every verb resolves
// a world's name by the same rules.
func (d *Daemon) findWorld(ctx context.Context, ref api.WorldRef) (*registry.Worktree, error) {
	return world.Find(ctx, d.reg, ref)
}
