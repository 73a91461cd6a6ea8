package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/dotenv"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/tokens"
	"github.com/binkyhq/binky/host/worktree"
)

func (e *Engine) SupKey(project, worktree, service string) supervisor.Key {
	return supervisor.Key{Home: e.homeID, Project: project, Worktree: worktree, Service: service}
}

// startService starts one cmd service and waits until it is healthy.
func (e *Engine) startService(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) error {
	spec, err := e.serviceSpec(w, rec, svc, coords)
	if err != nil {
		return err
	}
	ports := w.plan[svc.Name]
	url := ""
	if svc.URL != "" {
		url = coords[svc.Name+".url"]
	}
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindCmd, State: state.ServiceStarting,
		Ports: ports, URL: url, SpecHash: e.specHash(w, rec, svc, coords),
	}); err != nil {
		return fmt.Errorf("record service %s: %w", svc.Name, err)
	}
	s.Progress("start", svc.Name, "")
	return e.runSpec(ctx, s, svc.Name, spec)
}

// runSpec starts a cmd service's process from spec and waits until it is
// healthy, telling s (nil: nobody) of each step.
func (e *Engine) runSpec(ctx context.Context, s Progress, name string, spec supervisor.Spec) error {
	if err := e.sup.Start(ctx, spec); err != nil {
		return api.Errorf(api.CodeFailed, "start %s: %w", name, err)
	}
	if spec.Health != nil && s != nil {
		s.Progress("health", name, spec.Health.String())
	}
	if err := e.sup.WaitHealthy(ctx, spec.Key); err != nil {
		var he *supervisor.HealthError
		if errors.As(err, &he) {
			return api.Wrap(api.CodeFailed, err)
		}
		return api.Errorf(api.CodeFailed, "%s did not become healthy: %w", name, err)
	}
	if s != nil {
		s.Progress("healthy", name, "")
	}
	return nil
}

// serviceSpec renders everything a cmd service needs to run.
func (e *Engine) serviceSpec(w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) (supervisor.Spec, error) {
	dir := svc.Dir(rec.Path)
	env, err := e.serviceEnv(w, rec, svc, coords)
	if err != nil {
		return supervisor.Spec{}, err
	}
	run := w.renderCmd(svc.Cmd, svc.Name, coords)
	spec := supervisor.Spec{
		Key:         e.SupKey(rec.Project, rec.Name, svc.Name),
		Command:     run.Command,
		Dir:         dir,
		Env:         withVars(env, run.Env),
		LogPath:     filepath.Join(e.logDir(rec.Project, rec.Name), svc.Name+".log"),
		Restart:     supervisor.Restart(svc.Restart),
		StopSignal:  svc.StopSignal,
		StopTimeout: svc.StopTimeout,
		WatchRoot:   rec.Path,
		Watch:       svc.Watch,
	}
	if svc.Health == nil && svc.URL != "" {
		// A proxied service must listen on its port: without a health
		// check of its own, a connect to that port is its probe, so it is
		// never reported running on a port nothing answers on.
		spec.Health = &health.Probe{TCP: "127.0.0.1:" + coords[svc.Name+".port"], Dir: dir}
	}
	if h := svc.Health; h != nil {
		probe := w.renderCmd(h.Exec, svc.Name, coords)
		spec.Health = &health.Probe{
			HTTP:     w.render(h.HTTP, svc.Name, coords),
			TCP:      w.render(h.TCP, svc.Name, coords),
			Exec:     probe.Command,
			Dir:      dir,
			Env:      withVars(env, probe.Env),
			Timeout:  h.Timeout,
			Interval: h.Interval,
		}
	}
	return spec, nil
}

// hookCommand renders a migrate or seed command of an adapter service and
// the environment it runs with (serviceEnv plus the variables carrying its
// tokens).
func (e *Engine) hookCommand(w *world, rec *registry.Worktree, svc *config.Service, command string, coords map[string]string) (string, []string, error) {
	env, err := e.serviceEnv(w, rec, svc, coords)
	if err != nil {
		return "", nil, err
	}
	run := w.renderCmd(command, svc.Name, coords)
	return run.Command, withVars(env, run.Env), nil
}

// withVars appends the variables a rendered command references; they come
// last, so they win over anything of the same name.
func withVars(env, vars []string) []string {
	if len(vars) == 0 {
		return env
	}
	return append(append(make([]string, 0, len(env)+len(vars)), env...), vars...)
}

// serviceEnv is the environment of a process binky starts for a service
// (the service itself, its migrate and seed, its exec health check): the
// environment of the caller whose verb started it, minus what binky
// withholds (callerBase), then the service's env_file, then its env
// with tokens rendered, then PORT and BINKY_*. The daemon's own
// environment never enters: it is whichever shell first started the
// daemon, and may hold another project's credentials.
func (e *Engine) serviceEnv(w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) ([]string, error) {
	m := callerBase(w.caller)
	vals, err := serviceEnvFile(rec, svc)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalid, "service %s: %w", svc.Name, err)
	}
	for k, v := range vals {
		m[k] = v
	}
	for k, v := range svc.Env {
		m[k] = w.render(v, svc.Name, coords)
	}
	if p, ok := coords[svc.Name+".port"]; ok && !svc.IsAdapter() {
		m["PORT"] = p
	}
	if svc.UnsetsPort() {
		delete(m, "PORT")
	}
	m["BINKY_PROJECT"] = rec.Project
	m["BINKY_WORKTREE"] = rec.Name
	m["BINKY_WORKTREE_PATH"] = rec.Path
	return environ(m), nil
}

// serviceEnvFile reads a service's env_file (relative to its worktree,
// else to the main worktree: config.EnvFilePath); nil when it has none.
func serviceEnvFile(rec *registry.Worktree, svc *config.Service) (map[string]string, error) {
	if svc.EnvFile == "" {
		return nil, nil
	}
	return dotenv.ReadFile(config.EnvFilePath(svc.EnvFile, rec.Path, worktree.MainRoot(rec.Path)))
}

// callerBase copies a caller's environment without what binky withholds
// from the processes it starts: BINKY_HOME (a service has no business
// driving binky; verify commands get it back, see verifyEnv), the
// supervisor's marker and token variables, which binky sets itself, so a
// caller that is itself a binky service passes none of its own on.
func callerBase(caller map[string]string) map[string]string {
	m := make(map[string]string, len(caller))
	for k, v := range caller {
		if k == "BINKY_HOME" || k == supervisor.MarkerEnv || strings.HasPrefix(k, tokens.ShellVarPrefix) {
			continue
		}
		m[k] = v
	}
	return m
}

// environ renders m as sorted KEY=value entries.
func environ(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+m[k])
	}
	return env
}

// supStore persists what the supervisor learns into the registry.
type supStore struct{ d *Engine }

func (st *supStore) ProcessStarted(rec supervisor.Record) error {
	ctx := context.Background()
	wt, err := st.d.reg.Worktree(ctx, rec.Key.Project, rec.Key.Worktree)
	if err != nil {
		return err
	}
	if err := st.d.reg.SetServiceSpec(ctx, wt.ID, rec.Key.Service, SpecJSON(rec.Spec)); err != nil {
		return err
	}
	now := state.ServiceStarting
	if cur, ok := st.d.sup.State(rec.Key); ok && cur.State != "" {
		now = cur.State
	}
	return st.d.reg.SetServiceProcess(ctx, wt.ID, rec.Key.Service, rec.Pid, rec.Pgid, rec.StartTime, now)
}

func (st *supStore) ProcessExited(key supervisor.Key, exit supervisor.Exit) error {
	ctx := context.Background()
	wt, err := st.d.reg.Worktree(ctx, key.Project, key.Worktree)
	if err != nil {
		return err
	}
	code := exit.Code
	return st.d.reg.SetServiceState(ctx, wt.ID, key.Service, exit.State, &code, exit.Err)
}

// onSupervisorEvent records supervisor events and keeps proxy routes live.
func (e *Engine) onSupervisorEvent(ev supervisor.Event) {
	evt := events.Event{Event: ev.Name, Project: ev.Key.Project, Worktree: ev.Key.Worktree, Service: ev.Key.Service, Error: ev.Error}
	if ev.Pid > 0 {
		evt.PID = ev.Pid
	}
	if ev.Name == supervisor.EventExited || ev.Name == supervisor.EventFailed {
		code := ev.ExitCode
		evt.ExitCode = &code
	}
	if len(ev.LogTail) > 0 {
		evt.Detail = lastLines(ev.LogTail, 20)
	}
	if ev.Path != "" {
		evt.Detail = ev.Path
	}
	if ev.Attempt > 0 {
		evt.Attempt = ev.Attempt
		evt.DurationMS = ev.Delay.Milliseconds()
	}
	e.events.Emit(evt)
	e.routes.RefreshAsync()
}

// SpecJSON is how a service's run spec is kept in the registry, so a later
// daemon can re-adopt (or restart) exactly what this one started.
func SpecJSON(s supervisor.Spec) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return string(b)
}
