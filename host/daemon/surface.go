package daemon

import (
	"context"

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

var (
	_ world.Events = (*engineEvents)(nil)
	_ world.Routes = (*engineRoutes)(nil)
)
