package daemon

import (
	"context"
	"time"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/world"
)

// The daemon's side of the engine's interfaces (host/world/surface.go):
// each is the Daemon seen as one concern.

// engineEvents is the daemon's event log.
type engineEvents Daemon

func (d *engineEvents) Emit(e events.Event) { (*Daemon)(d).emit(e) }

// engineRoutes is the daemon's proxy table.
type engineRoutes Daemon

func (d *engineRoutes) Refresh(ctx context.Context) { (*Daemon)(d).refreshRoutes(ctx) }
func (d *engineRoutes) RefreshAsync()               { (*Daemon)(d).refreshRoutesAsync() }
func (d *engineRoutes) URLFor(cfg *config.Config) func(string) string {
	return (*Daemon)(d).urlFor(cfg)
}

func (d *engineRoutes) Activity(project, worktree, service string) (int, time.Time) {
	if d.proxy == nil {
		return 0, time.Time{}
	}
	return d.proxy.Activity(project, worktree, service)
}

var (
	_ world.Events = (*engineEvents)(nil)
	_ world.Routes = (*engineRoutes)(nil)
)
