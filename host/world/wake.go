package world

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// WakeStart starts a down world's cmd services from the run specs its
// last up recorded (the environment of the caller of that up: a wake has
// no caller of its own), through the start loop of up (startLevels), each
// waited healthy; slices and ports are kept across down, so nothing else
// is needed. A world up meanwhile is left as it is; one in another state
// is refused. The caller (the daemon's waker) has admitted it.
func (e *Engine) WakeStart(ctx context.Context, cfg *config.Config, rec *registry.Worktree) error {
	m := e.WorldLock(rec.Project, rec.Name)
	if err := m.Lock(ctx, nil, "wake", rec.Name); err != nil {
		return err
	}
	defer m.Unlock()
	fresh, err := e.reg.WorktreeByID(ctx, rec.ID)
	if err != nil {
		return err
	}
	if fresh.State == state.WorldUp {
		return nil
	}
	if fresh.State != state.WorldDown {
		return fmt.Errorf("world %s is %s: only a down world is started on request", rec.Name, fresh.State)
	}
	specs, err := e.recordedSpecs(ctx, rec)
	if err != nil {
		return err
	}
	if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldStarting); err != nil {
		return err
	}
	sel := selectionOf(cfg, fresh.Selection)
	if err := startLevels(cfg, func(name string) error {
		spec, ok := specs[name]
		if c := cfg.Services[name]; !ok || !sel.in(name) || (c != nil && c.Wake) {
			return nil
		}
		return e.runSpec(ctx, nil, name, spec)
	}); err != nil {
		e.reg.SetWorktreeState(ctx, rec.ID, state.WorldFailed)
		return err
	}
	if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldUp); err != nil {
		return err
	}
	e.routes.Refresh(ctx)
	return nil
}

// recordedSpecs are the run specs of a world's cmd services as its last
// up recorded them, by service, but for those binky stop stopped.
func (e *Engine) recordedSpecs(ctx context.Context, rec *registry.Worktree) (map[string]supervisor.Spec, error) {
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	specs := map[string]supervisor.Spec{}
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd || sv.Spec == "" || sv.Stopped {
			continue // a service binky stop stopped stays stopped
		}
		var spec supervisor.Spec
		if err := json.Unmarshal([]byte(sv.Spec), &spec); err != nil {
			return nil, fmt.Errorf("read the recorded run of %s: %w (run binky up %s)", sv.Name, err, rec.Name)
		}
		specs[sv.Name] = spec
	}
	return specs, nil
}
