package world

import (
	"context"
	"fmt"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/sdk"
)

// Reset puts a world's slices (or one service's) back to the golden state:
// the slice is dropped and cloned again from the template (rebuilt first if
// migrate or seed changed). A service without clone_from is rebuilt by
// provision+migrate+seed.
func (e *Engine) Reset(ctx context.Context, a api.ResetArgs, s Progress) (*api.World, error) {
	rec, unlock, err := e.lockWorld(ctx, s, "reset", a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	w, svcs, err := e.recordedWorld(ctx, cfg, rec, a.Env)
	if err != nil {
		return nil, err
	}
	recorded := recordedSlices(cfg, svcs)
	// A slice the world's selection (a profile, --only) leaves out is not
	// the world's to make: reset leaves it as it is, or absent.
	sel := selectionOf(cfg, rec.Selection)
	if a.Service != "" && !sel.in(a.Service) {
		return nil, api.Errorf(api.CodeInvalid, "%s is not in %s's selection (%s): binky up %s --all runs it, then reset it", a.Service, rec.Name, sel.why, rec.Name)
	}
	restart, err := e.stopForReset(ctx, s, cfg, rec, a)
	if err != nil {
		return nil, err
	}
	done := 0
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			svc := cfg.Services[name]
			if !svc.IsAdapter() || (a.Service != "" && a.Service != name) || !sel.in(name) {
				continue
			}
			slName := recorded[name]
			if slName == "" {
				slName = e.sliceName(ctx, cfg, rec.Name, svc)
			}
			if err := e.resetSlice(ctx, s, w, rec, name, svc, slName); err != nil {
				return nil, err
			}
			done++
		}
	}
	if done == 0 {
		if a.Service != "" {
			return nil, api.Errorf(api.CodeInvalid, "%s has no adapter service %q", rec.Name, a.Service)
		}
		return nil, api.Errorf(api.CodeInvalid, "%s has no adapter services to reset", rec.Name)
	}
	// A setup whose commands or inputs changed runs before what depends on
	// it starts again (a branch merged with new dependencies), as in up.
	if err := e.warmWorktree(ctx, s, w, rec); err != nil {
		return nil, err
	}
	// Start what was stopped, in order, each waited healthy, against the
	// slices as they are now.
	coords := w.coords()
	for _, name := range restart {
		if err := e.startService(ctx, s, w, rec, cfg.Services[name], coords); err != nil {
			return nil, e.degradeReset(ctx, rec, name, err)
		}
	}
	if rec.State == state.WorldDegraded {
		// A reset that completes repairs what a cut-short one left.
		if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldUp); err == nil {
			rec.State, rec.Reason = state.WorldUp, ""
		}
	}
	return e.worldStatus(ctx, rec)
}

// recordedSlices maps each adapter service of svcs to the slice recorded
// for it, when the service still uses the adapter binky.toml names.
func recordedSlices(cfg *config.Config, svcs []*registry.Service) map[string]string {
	recorded := map[string]string{}
	for _, sv := range svcs {
		if sv.Kind == registry.KindAdapter && sv.Slice != "" && (sv.Adapter == "" || sv.Adapter == cfgAdapter(cfg, sv.Name)) {
			recorded[sv.Name] = sv.Slice
		}
	}
	return recorded
}

// stopForReset stops what depends on the slices a reset drops, unless
// the reset asks for no restart, and returns what to start again after.
// They are stopped before a slice is dropped (an app must not see its
// database vanish under it, nor keep state from the old one), started
// again after, in order.
func (e *Engine) stopForReset(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, a api.ResetArgs) ([]string, error) {
	var targets []string
	for _, name := range cfg.Order {
		if svc := cfg.Services[name]; svc.IsAdapter() && (a.Service == "" || a.Service == name) {
			targets = append(targets, name)
		}
	}
	var restart []string
	if !a.NoRestart {
		// Started again after: each dependent the supervisor knows that was
		// neither stopped nor ended on its own (a lost one too, unlike
		// state.Service.Ended).
		for _, name := range dependents(cfg, targets) {
			if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, name)); ok && st.State != state.ServiceStopped && st.State != state.ServiceExited && st.State != state.ServiceFailed {
				restart = append(restart, name)
			}
		}
		if err := e.stopDependents(ctx, s, cfg, rec, targets, "it depends on a slice being reset"); err != nil {
			return nil, err
		}
	}
	return restart, nil
}

// degradeReset records that a reset failed at name (an up world becomes
// degraded) and returns err.
func (e *Engine) degradeReset(ctx context.Context, rec *registry.Worktree, name string, err error) error {
	reason := fmt.Sprintf("reset failed at %s: %v; binky up rebuilds what the reset left and restarts what depends on it", name, err)
	now := rec.State
	if now == state.WorldUp {
		now = state.WorldDegraded
	}
	if serr := e.reg.SetWorktreeStateReason(ctx, rec.ID, now, reason); serr != nil {
		e.log.Warn("record a degraded world", "world", rec.Name, "error", serr)
	}
	return err
}

// resetSlice drops the slice slName of service name and makes it again,
// from the golden template when svc clones from one, else by provision,
// migrate and seed; the slice made is recorded and put in w.slices.
func (e *Engine) resetSlice(ctx context.Context, s Progress, w *world, rec *registry.Worktree, name string, svc *config.Service, slName string) error {
	conn, err := e.openAdapter(ctx, svc)
	if err != nil {
		return err
	}
	admin, cfgJSON := recordedAs(svc)
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: name, Kind: registry.KindAdapter, State: state.ServiceProvisioning,
		Slice: slName, Adapter: svc.Adapter, Admin: admin, Config: cfgJSON,
	}); err != nil {
		conn.Close()
		return fmt.Errorf("record the reset of %s before dropping its slice (nothing was dropped): %w", name, err)
	}
	s.Progress("reset", name, slName)
	if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: e.target(w, svc, slName, w.coords())}); err != nil {
		conn.Close()
		return e.degradeReset(ctx, rec, name, api.Errorf(api.CodeFailed, "drop slice %q of %s: %w", slName, name, err))
	}
	e.events.Emit(events.Event{Event: events.SliceDestroyed, Project: rec.Project, Worktree: rec.Name, Service: name, Adapter: svc.Adapter})
	var sl slice
	if svc.CloneFrom != "" {
		sl, err = e.sliceFromGolden(ctx, s, w, rec, svc, conn, slName)
	} else {
		sl, err = e.buildSlice(ctx, s, w, rec, svc, conn, slName)
	}
	conn.Close()
	if err != nil {
		return e.degradeReset(ctx, rec, name, err)
	}
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: name, Kind: registry.KindAdapter, State: state.ServiceProvisioned,
		Address: sl.Address, Values: sl.Values, Slice: slName, Adapter: svc.Adapter,
	}); err != nil {
		return e.degradeReset(ctx, rec, name, fmt.Errorf("record the reset slice of %s: %w", name, err))
	}
	if err := e.recordMade(ctx, w, rec, svc); err != nil {
		return e.degradeReset(ctx, rec, name, err)
	}
	w.slices[name] = sl
	return nil
}

// cfgAdapter is the adapter binky.toml names for service name, or "".
func cfgAdapter(cfg *config.Config, name string) string {
	if svc, ok := cfg.Services[name]; ok {
		return svc.Adapter
	}
	return ""
}
