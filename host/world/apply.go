package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	lifecycle "github.com/binkyhq/binky/host/world/plan"
	"github.com/binkyhq/binky/sdk"
)

// specHash hashes what binky.toml makes of a cmd service: its rendered
// command and the token values it carries, its env (from binky.toml and
// its env_file), cwd, ports, health, restart and stop settings, and watch
// globs. The caller's whole environment is left out: a service is not
// restarted because the shell that ran up has another PWD.
func (e *Engine) specHash(w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) string {
	run := w.renderCmd(svc.Cmd, svc.Name, coords)
	env := map[string]string{}
	if vals, err := serviceEnvFile(rec, svc); err == nil {
		for k, v := range vals {
			env[k] = v
		}
	}
	for k, v := range svc.Env {
		env[k] = w.render(v, svc.Name, coords)
	}
	h := struct {
		Command, Cwd                  string
		Vars                          []string
		Env                           map[string]string
		Ports                         map[string]int
		HTTP, TCP, Exec               string
		ExecVars                      []string
		HealthTimeout, HealthInterval time.Duration
		Restart, StopSignal           string
		StopTimeout                   time.Duration
		Watch                         []string
	}{
		Command: run.Command, Cwd: svc.Cwd, Vars: run.Env, Env: env, Ports: w.plan[svc.Name],
		Restart: svc.Restart, StopSignal: svc.StopSignal, StopTimeout: svc.StopTimeout, Watch: svc.Watch,
	}
	if hc := svc.Health; hc != nil {
		probe := w.renderCmd(hc.Exec, svc.Name, coords)
		h.HTTP, h.TCP, h.Exec, h.ExecVars = w.render(hc.HTTP, svc.Name, coords), w.render(hc.TCP, svc.Name, coords), probe.Command, probe.Env
		h.HealthTimeout, h.HealthInterval = hc.Timeout, hc.Interval
	}
	sort.Strings(h.Vars)
	sort.Strings(h.ExecVars)
	b, _ := json.Marshal(h)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// recordedWorld is rec as it runs: cfg rendered with the world's recorded
// ports and slices, ${env.*} resolved from the caller (and env files, the
// secret ones registered with the redactor). It also returns the
// registry's services of the world.
func (e *Engine) recordedWorld(ctx context.Context, cfg *config.Config, rec *registry.Worktree, caller map[string]string) (*world, []*registry.Service, error) {
	envVals, err := resolveEnv(cfg, rec.Path, caller)
	if err != nil {
		return nil, nil, err
	}
	e.addSecrets(cfg, envVals)
	w, byName, err := e.worldAsRecorded(ctx, cfg, rec)
	if err != nil {
		return nil, nil, err
	}
	w.env, w.caller = envVals, caller
	svcs := make([]*registry.Service, 0, len(byName))
	for _, sv := range byName {
		svcs = append(svcs, sv)
	}
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].Name < svcs[j].Name })
	return w, svcs, nil
}

// apply carries out p on the observed world o, and nothing else, in this
// order: the stops (services removed, and those to restart), the slices
// pruned, the port block (kept, grown or moved), [worktree] setup when it
// runs again, the slices (provisioned, reconfigured, migrated, verified),
// the starts (every service not running that the user did not stop), and
// the URLs recorded anew. The world is up when it returns.
func (e *Engine) apply(ctx context.Context, s Progress, o *observed, p lifecycle.Plan, caller map[string]string) (*api.World, error) {
	rec, cfg, w := o.rec, o.cfg, o.w
	if err := e.applyStops(ctx, s, o, p, caller); err != nil {
		return nil, err
	}
	if err := e.applyPorts(ctx, s, o); err != nil {
		return nil, err
	}
	// A new worktree starts warm; a changed setup runs before anything
	// that depends on it starts again (warm.go).
	if err := e.warmWorktree(ctx, s, w, rec); err != nil {
		return nil, err
	}
	if err := e.applySlices(ctx, s, o, p); err != nil {
		return nil, err
	}
	// What the plan could not see: a slice rebuilt or moved on its
	// server hands out another address, and a block taken by another
	// program moved the ports.
	if err := e.stopChanged(ctx, s, o, "what it reads changed"); err != nil {
		return nil, err
	}
	coords := w.coords()
	waits := map[string]bool{}
	for _, st := range p.Wait {
		waits[st.Service] = true
	}
	if err := startLevels(cfg, func(name string) error {
		if !e.wantsStart(o, name) {
			return nil
		}
		if waits[name] {
			return e.parkService(ctx, s, w, rec, cfg.Services[name], coords)
		}
		return e.startService(ctx, s, w, rec, cfg.Services[name], coords)
	}); err != nil {
		return nil, err
	}
	for _, st := range p.Update {
		s.Progress("update", st.Service, st.To)
		if err := e.reg.SetServiceURL(ctx, rec.ID, st.Service, st.To); err != nil {
			return nil, fmt.Errorf("record the URL of %s: %w", st.Service, err)
		}
	}
	if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldUp); err != nil {
		return nil, fmt.Errorf("record world state: %w", err)
	}
	e.routes.Refresh(ctx)
	s.Progress("ready", "", "")
	rec.State = state.WorldUp
	return e.worldStatus(ctx, rec)
}

// wantsStart reports whether apply starts the cmd service name: it does
// not run (new, stopped for a restart, or ended), and the user did not
// stop it alone.
func (e *Engine) wantsStart(o *observed, name string) bool {
	if !o.sel.in(name) {
		return false
	}
	if sv, ok := o.svcs[name]; ok && sv.Stopped {
		return false
	}
	st, ok := e.sup.State(e.SupKey(o.rec.Project, o.rec.Name, name))
	return !ok || !st.State.Live()
}

// applyStops carries out what the plan stops before anything starts:
// services removed from binky.toml are stopped and forgotten, services the
// world's selection leaves out stopped (their record kept), services to
// restart are stopped (the starts start them with their new spec), and
// with --prune the slices of removed services destroyed.
func (e *Engine) applyStops(ctx context.Context, s Progress, o *observed, p lifecycle.Plan, callerEnv map[string]string) error {
	rec := o.rec
	for _, st := range slices.Backward(p.Stop) {
		if err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, st.Service)); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s (%s): %w", st.Service, st.Why, err)
		}
		if _, inCfg := o.cfg.Services[st.Service]; inCfg && !o.sel.in(st.Service) {
			continue // left out, not removed: its record and ports stay
		}
		if err := e.reg.DeleteService(ctx, rec.ID, st.Service); err != nil {
			return err
		}
		delete(o.svcs, st.Service)
	}
	for _, st := range slices.Backward(p.Restart) {
		if err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, st.Service)); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s to restart it (%s): %w", st.Service, st.Why, err)
		}
	}
	for _, st := range p.Prune {
		if err := e.pruneSlice(ctx, s, rec, st.Service, callerEnv); err != nil {
			return err
		}
		delete(o.svcs, st.Service)
	}
	return nil
}

// applyPorts reserves the world's port block: kept, grown in place, or
// (a new world, or one whose block cannot grow or was taken) a block of
// its own elsewhere. When the block moved, the ports are laid out again
// and every running service whose rendered spec changed with them (its
// ports, or a token of another's) is stopped, so the starts restart it on
// its new ports.
func (e *Engine) applyPorts(ctx context.Context, s Progress, o *observed) error {
	if o.need == 0 {
		return nil
	}
	lo, err := e.reservePorts(ctx, s, o.cfg, o.rec, max(o.need, o.size))
	if err != nil {
		return err
	}
	if lo == o.lo {
		return nil // kept or grown in place: the layout stands
	}
	moved := o.lo > 0
	o.w.plan, _ = portLayout(o.cfg, lo, 0, nil)
	o.lo, o.size = lo, o.need
	if !moved {
		return nil
	}
	return e.stopChanged(ctx, s, o, "the world's ports moved")
}

// stopChanged stops every running cmd service of o whose spec, rendered
// now, is not the one it was started with, so the starts restart it.
func (e *Engine) stopChanged(ctx context.Context, s Progress, o *observed, why string) error {
	coords := o.w.coords()
	for _, name := range slices.Backward(o.cfg.Order) {
		svc, sv := o.cfg.Services[name], o.svcs[name]
		if svc.IsAdapter() || sv == nil || sv.SpecHash == "" || e.specHash(o.w, o.rec, svc, coords) == sv.SpecHash {
			continue
		}
		key := e.SupKey(o.rec.Project, o.rec.Name, name)
		if st, ok := e.sup.State(key); !ok || !st.State.Live() {
			continue
		}
		s.Progress("restart", name, why)
		if err := e.sup.Stop(ctx, key); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s to restart it (%s): %w", name, why, err)
		}
	}
	return nil
}

// applySlices makes each slice of the world what the plan says, in
// depends_on order so an adapter's tokens can name another: provisioned,
// verified (rebuilt when it vanished), handed its adapter's new config
// (provision is idempotent and applies it), migrated again. A slice made
// again under running services restarts what depends on it, so no app
// keeps state from the slice that was there before.
func (e *Engine) applySlices(ctx context.Context, s Progress, o *observed, p lifecycle.Plan) error {
	rec, cfg, w := o.rec, o.cfg, o.w
	migrate := map[string]bool{}
	for _, st := range p.Migrate {
		migrate[st.Service] = true
	}
	var rebuilt []string
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			svc := cfg.Services[name]
			if !svc.IsAdapter() || !o.sel.in(name) {
				continue
			}
			sl, made, err := e.ensureSlice(ctx, s, w, rec, svc)
			if err == nil && migrate[name] && !made {
				err = e.migrateSlice(ctx, s, w, rec, svc, sl)
			}
			if err != nil {
				// status says why this slice is not there, instead of a
				// slice "provisioning" for ever; the next up rebuilds it.
				reason := OneLine(e.redact.String(err.Error()))
				if serr := e.reg.SetServiceState(ctx, rec.ID, name, state.ServiceFailed, nil, "provisioning failed: "+reason); serr != nil {
					e.log.Warn("record a failed slice", "service", name, "error", serr)
				}
				return err
			}
			w.slices[name] = sl
			if made {
				rebuilt = append(rebuilt, name)
			}
		}
	}
	return e.stopDependents(ctx, s, cfg, rec, rebuilt, "its slice was rebuilt")
}

// migrateSlice runs the migrate of a kept slice again (its command or
// inputs changed: a branch merged with a new migration) and records what
// it ran.
func (e *Engine) migrateSlice(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, sl slice) error {
	if err := e.runSliceSteps(ctx, s, w, rec, svc, sl, false); err != nil {
		return err
	}
	return e.reg.SetServiceInputs(ctx, rec.ID, svc.Name, "", migrateSum(svc, rec.Path))
}

// pruneSlice destroys the slice of a service removed from binky.toml, by
// the settings recorded with it, and forgets it.
func (e *Engine) pruneSlice(ctx context.Context, s Progress, rec *registry.Worktree, name string, callerEnv map[string]string) error {
	sv, err := e.reg.Service(ctx, rec.ID, name)
	if err != nil {
		return err
	}
	svc, err := recordedService(sv)
	if err != nil {
		return api.Errorf(api.CodeInvalid, "prune %s: %w", name, err)
	}
	src := adapterStrings{cfg: &config.Config{}, extra: []string{svc.AdminURL}}
	envVals, err := resolveEnvOf(src, &config.Config{}, rec.Path, callerEnv)
	if err != nil {
		return api.Errorf(api.CodeInvalid, "prune %s: %w", name, err)
	}
	e.addSecrets(&config.Config{Order: []string{name}, Services: map[string]*config.Service{name: svc}}, envVals)
	w := &world{cfg: &config.Config{}, project: rec.Project, worktree: rec.Name, path: rec.Path, env: envVals, slices: map[string]slice{}}
	conn, err := e.openAdapter(ctx, svc)
	if err != nil {
		return err
	}
	defer conn.Close()
	s.Progress("prune", name, sv.Slice)
	if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: e.target(w, svc, sv.Slice, w.coords())}); err != nil {
		return api.Errorf(api.CodeFailed, "prune the slice %q of %s: %w", sv.Slice, name, err)
	}
	e.events.Emit(events.Event{Event: events.SliceDestroyed, Project: rec.Project, Worktree: rec.Name, Service: name, Adapter: svc.Adapter})
	return e.reg.DeleteService(ctx, rec.ID, name)
}

// dryRun answers up --dry-run: the plan for the world the arguments name,
// computed against what runs, with nothing created, queued or changed. A
// world that does not exist yet is reported absent: up would create all
// of it.
func (e *Engine) dryRun(ctx context.Context, a api.UpArgs, mainCfg *config.Config) (*api.World, error) {
	ref := api.WorldRef{Name: a.Branch, Dir: a.Dir, Project: mainCfg.Project.Name, Env: a.Env}
	rec, err := e.findWorld(ctx, ref)
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeNotFound {
			return &api.World{Project: mainCfg.Project.Name, Worktree: a.Branch, Branch: a.Branch, State: state.WorldAbsent, Services: []api.Service{}}, nil
		}
		return nil, err
	}
	cfg := mainCfg
	if c, err := LoadConfigContext(ctx, filepath.Join(rec.Path, "binky.toml")); err == nil {
		cfg = c
	}
	o, err := e.observe(ctx, cfg, rec, a.Env)
	if err != nil {
		return nil, err
	}
	if o.sel, err = e.upSelection(ctx, cfg, rec.Name, a); err != nil {
		return nil, err
	}
	p := e.plan(o, a.Prune)
	w, err := e.worldStatus(ctx, rec)
	if err != nil {
		return nil, err
	}
	w.Noop = e.noop(ctx, o, p)
	if w.Noop {
		p.Verify = nil // an up with nothing to do verifies nothing either
	}
	w.Plan = &p
	return w, nil
}

// noop reports whether an up of the observed world has nothing to do: it
// is up, the plan changes nothing, and everything of it runs.
func (e *Engine) noop(ctx context.Context, o *observed, p lifecycle.Plan) bool {
	return o.rec.State == state.WorldUp && p.Empty() && o.sel.sel.Encode() == o.rec.Selection && e.allRunning(ctx, o.cfg, o.rec, o.sel) &&
		e.waitsRecorded(o, p)
}

// waitsRecorded reports whether each wake service the plan leaves
// waiting is recorded with its run as binky.toml makes it now (else apply
// records it again).
func (e *Engine) waitsRecorded(o *observed, p lifecycle.Plan) bool {
	coords := o.w.coords()
	for _, st := range p.Wait {
		sv := o.svcs[st.Service]
		if sv == nil || sv.Spec == "" || sv.SpecHash != e.specHash(o.w, o.rec, o.cfg.Services[st.Service], coords) {
			return false
		}
	}
	return true
}
