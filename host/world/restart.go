package world

import (
	"context"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/api"
)

// Restart restarts a world's cmd services — the named ones, or all — in
// dependency order: stopped last-first, then started first-first, each
// waited healthy as up waits, with the config the world runs with now.
func (e *Engine) Restart(ctx context.Context, a api.RestartArgs, s Progress) (*api.World, error) {
	ref, services, err := e.serviceRef(ctx, a.WorldRef, a.Services)
	if err != nil {
		return nil, err
	}
	a.WorldRef, a.Services = ref, services
	rec, unlock, err := e.lockWorld(ctx, s, "restart", a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	// Restarting every service leaves those binky stop stopped alone, and
	// those the world's selection leaves out; one named is started, and
	// no longer counts as stopped by the user.
	sel := selectionOf(cfg, rec.Selection)
	held := map[string]bool{}
	if svcs, err := e.reg.Services(ctx, rec.ID); err == nil {
		for _, sv := range svcs {
			held[sv.Name] = sv.Stopped
		}
	}
	var order []string
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			named := slices.Contains(a.Services, name)
			if svc := cfg.Services[name]; !svc.IsAdapter() && (named || (len(a.Services) == 0 && !held[name] && sel.in(name))) {
				order = append(order, name)
			}
		}
	}
	for _, name := range a.Services {
		svc, ok := cfg.Services[name]
		if !ok || svc.IsAdapter() {
			var cmds []string
			for _, n := range cfg.Order {
				if !cfg.Services[n].IsAdapter() {
					cmds = append(cmds, n)
				}
			}
			return nil, api.Errorf(api.CodeInvalid, "%s has no cmd service %q (it has: %s)", rec.Name, name, strings.Join(cmds, ", "))
		}
	}
	if len(order) == 0 {
		return nil, api.Errorf(api.CodeInvalid, "%s has no cmd services to restart", rec.Name)
	}
	w, _, err := e.recordedWorld(ctx, cfg, rec, a.Env)
	if err != nil {
		return nil, err
	}
	// A restart of the whole world leaves a wake service that waits for
	// its first request waiting (recorded with this run); one named is
	// started.
	waits := map[string]bool{}
	for _, name := range order {
		if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, name)); len(a.Services) == 0 && cfg.Services[name].Wake && (!ok || !st.State.Live()) {
			waits[name] = true
		}
	}
	for _, name := range slices.Backward(order) {
		s.Progress("stop", name, "restart")
		if err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, name)); err != nil {
			return nil, api.Errorf(api.CodeFailed, "stop %s to restart it: %w", name, err)
		}
	}
	coords := w.coords()
	for _, name := range order {
		if held[name] {
			if err := e.reg.SetServiceStopped(ctx, rec.ID, name, false); err != nil {
				return nil, api.Errorf(api.CodeFailed, "record that %s is started again: %w", name, err)
			}
		}
		start := e.startService
		if waits[name] {
			start = e.parkService
		}
		if err := start(ctx, s, w, rec, cfg.Services[name], coords); err != nil {
			return nil, err
		}
	}
	e.routes.Refresh(ctx)
	return e.worldStatus(ctx, rec)
}
