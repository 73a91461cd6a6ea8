package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
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
// port block and slices, ${env.*} resolved from the caller (and env
// files, the secret ones registered with the redactor). It also returns the
// registry's services of the world.
func (e *Engine) recordedWorld(ctx context.Context, cfg *config.Config, rec *registry.Worktree, caller map[string]string) (*world, []*registry.Service, error) {
	envVals, err := resolveEnv(cfg, rec.Path, caller)
	if err != nil {
		return nil, nil, err
	}
	e.addSecrets(cfg, envVals)
	lo, _, _ := e.ports.Block(ctx, rec.Project, rec.Name)
	plan, _ := portPlan(cfg, lo)
	w := &world{cfg: cfg, project: rec.Project, worktree: rec.Name, path: rec.Path, plan: plan, slices: map[string]slice{},
		env: envVals, caller: caller, proxyURL: e.routes.URLFor(cfg), hostOf: e.hostOf(cfg, rec)}
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, sv := range svcs {
		if sv.Address != "" {
			w.slices[sv.Name] = slice{Address: sv.Address, Values: sv.Values}
		}
	}
	return w, svcs, nil
}

// planWorld computes what up would do to rec with cfg: the world as the
// registry and the supervisor have it against cfg rendered with the
// world's recorded ports and slices. It changes nothing.
func (e *Engine) planWorld(ctx context.Context, cfg *config.Config, rec *registry.Worktree, caller map[string]string, prune bool) (lifecycle.Plan, error) {
	w, svcs, err := e.recordedWorld(ctx, cfg, rec, caller)
	if err != nil {
		return lifecycle.Plan{}, err
	}
	have := map[string]lifecycle.Recorded{}
	for _, sv := range svcs {
		r := lifecycle.Recorded{Cmd: sv.Kind == registry.KindCmd, Hash: sv.SpecHash}
		if r.Cmd {
			if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, sv.Name)); ok {
				r.Live = st.State.Live()
			}
		} else {
			r.Live = sv.State == state.ServiceProvisioned && (sv.Adapter == "" || sv.Adapter == cfgAdapter(cfg, sv.Name))
		}
		have[sv.Name] = r
	}
	coords := w.coords()
	var want []lifecycle.Service
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			svc := cfg.Services[name]
			s := lifecycle.Service{Name: name, Cmd: !svc.IsAdapter(), DependsOn: svc.DependsOn}
			if s.Cmd {
				s.Hash = e.specHash(w, rec, svc, coords)
			}
			want = append(want, s)
		}
	}
	return lifecycle.Compute(want, have, prune), nil
}

// applyPlanStops carries out what a plan stops before the world is brought
// up again: services removed from binky.toml are stopped and forgotten,
// services to restart are stopped (the start step starts them with their
// new spec), and with --prune the slices of removed services destroyed.
func (e *Engine) applyPlanStops(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, p lifecycle.Plan, callerEnv map[string]string) error {
	for _, line := range p.Lines() {
		s.Progress("plan", "", line)
	}
	for i := len(p.Stop) - 1; i >= 0; i-- {
		st := p.Stop[i]
		if err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, st.Service)); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s (%s): %w", st.Service, st.Why, err)
		}
		if err := e.reg.DeleteService(ctx, rec.ID, st.Service); err != nil {
			return err
		}
	}
	for i := len(p.Restart) - 1; i >= 0; i-- {
		st := p.Restart[i]
		if err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, st.Service)); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s to restart it (%s): %w", st.Service, st.Why, err)
		}
	}
	for _, st := range p.Prune {
		if err := e.pruneSlice(ctx, s, rec, st.Service, callerEnv); err != nil {
			return err
		}
	}
	return nil
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
	p, err := e.planWorld(ctx, cfg, rec, a.Env, a.Prune)
	if err != nil {
		return nil, err
	}
	w, err := e.worldStatus(ctx, rec)
	if err != nil {
		return nil, err
	}
	w.Plan = &p
	w.Noop = p.Empty()
	return w, nil
}
