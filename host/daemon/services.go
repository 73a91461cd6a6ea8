package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/dotenv"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
)

func supKey(project, worktree, service string) supervisor.Key {
	return supervisor.Key{Project: project, Worktree: worktree, Service: service}
}

// startService starts one cmd service and waits until it is healthy.
func (d *Daemon) startService(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) error {
	spec, err := d.serviceSpec(w, rec, svc, coords)
	if err != nil {
		return err
	}
	ports := w.plan[svc.Name]
	url := ""
	if svc.URL != "" {
		url = coords[svc.Name+".url"]
	}
	if err := d.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindCmd, State: "starting",
		Ports: ports, URL: url,
	}); err != nil {
		return fmt.Errorf("record service %s: %w", svc.Name, err)
	}
	s.progress("start", svc.Name, "")
	if err := d.sup.Start(ctx, spec); err != nil {
		return errorf(api.CodeFailed, "start %s: %v", svc.Name, err)
	}
	if spec.Health != nil {
		s.progress("health", svc.Name, spec.Health.String())
	}
	if err := d.sup.WaitHealthy(ctx, spec.Key); err != nil {
		var he *supervisor.HealthError
		if errors.As(err, &he) {
			return errorf(api.CodeFailed, "%v", err)
		}
		return errorf(api.CodeFailed, "%s did not become healthy: %v", svc.Name, err)
	}
	s.progress("healthy", svc.Name, "")
	return nil
}

// serviceSpec renders everything a cmd service needs to run.
func (d *Daemon) serviceSpec(w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) (supervisor.Spec, error) {
	dir := rec.Path
	if svc.Cwd != "" {
		dir = filepath.Join(rec.Path, svc.Cwd)
	}
	env, err := d.serviceEnv(w, rec, svc, coords)
	if err != nil {
		return supervisor.Spec{}, err
	}
	spec := supervisor.Spec{
		Key:         supKey(rec.Project, rec.Name, svc.Name),
		Command:     w.render(svc.Cmd, svc.Name, coords),
		Dir:         dir,
		Env:         env,
		LogPath:     filepath.Join(d.logDir(rec.Project, rec.Name), svc.Name+".log"),
		Restart:     supervisor.Restart(svc.Restart),
		StopSignal:  svc.StopSignal,
		StopTimeout: svc.StopTimeout,
		WatchRoot:   rec.Path,
		Watch:       svc.Watch,
	}
	if h := svc.Health; h != nil {
		spec.Health = &health.Probe{
			HTTP:     w.render(h.HTTP, svc.Name, coords),
			TCP:      w.render(h.TCP, svc.Name, coords),
			Exec:     w.render(h.Exec, svc.Name, coords),
			Dir:      dir,
			Env:      env,
			Timeout:  h.Timeout,
			Interval: h.Interval,
		}
	}
	return spec, nil
}

// serviceEnv is a process's environment: the daemon's, then the service's
// env_file, then its env with tokens rendered, then PORT and BINKY_*.
func (d *Daemon) serviceEnv(w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) ([]string, error) {
	m := daemonEnv()
	if svc.EnvFile != "" {
		p := svc.EnvFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(rec.Path, p)
		}
		vals, err := dotenv.ReadFile(p)
		if err != nil {
			return nil, errorf(api.CodeInvalid, "service %s: %v", svc.Name, err)
		}
		for k, v := range vals {
			m[k] = v
		}
	}
	for k, v := range svc.Env {
		m[k] = w.render(v, svc.Name, coords)
	}
	if p, ok := coords[svc.Name+".port"]; ok && !svc.IsAdapter() {
		m["PORT"] = p
	}
	m["BINKY_PROJECT"] = rec.Project
	m["BINKY_WORKTREE"] = rec.Name
	m["BINKY_WORKTREE_PATH"] = rec.Path
	return environ(m), nil
}

// daemonEnv is the daemon's own environment as a map.
func daemonEnv() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := cut(kv); ok {
			m[k] = v
		}
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

func cut(kv string) (string, string, bool) {
	for i := 1; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}

// supStore persists what the supervisor learns into the registry.
type supStore struct{ d *Daemon }

func (st *supStore) ProcessStarted(rec supervisor.Record) error {
	ctx := context.Background()
	wt, err := st.d.reg.Worktree(ctx, rec.Key.Project, rec.Key.Worktree)
	if err != nil {
		return err
	}
	if err := st.d.reg.SetServiceSpec(ctx, wt.ID, rec.Key.Service, specJSON(rec.Spec)); err != nil {
		return err
	}
	state := "starting"
	if cur, ok := st.d.sup.State(rec.Key); ok && cur.State != "" {
		state = string(cur.State)
	}
	return st.d.reg.SetServiceProcess(ctx, wt.ID, rec.Key.Service, rec.Pid, rec.Pgid, rec.StartTime, state)
}

func (st *supStore) ProcessExited(key supervisor.Key, exit supervisor.Exit) error {
	ctx := context.Background()
	wt, err := st.d.reg.Worktree(ctx, key.Project, key.Worktree)
	if err != nil {
		return err
	}
	code := exit.Code
	return st.d.reg.SetServiceState(ctx, wt.ID, key.Service, string(exit.State), &code, exit.Err)
}

// onSupervisorEvent records supervisor events and keeps proxy routes live.
func (d *Daemon) onSupervisorEvent(ev supervisor.Event) {
	e := events.Event{Event: ev.Name, Project: ev.Key.Project, Worktree: ev.Key.Worktree, Service: ev.Key.Service, Error: ev.Error}
	if ev.Pid > 0 {
		e.PID = ev.Pid
	}
	if ev.Name == supervisor.EventExited || ev.Name == supervisor.EventFailed {
		code := ev.ExitCode
		e.ExitCode = &code
	}
	if len(ev.LogTail) > 0 {
		e.Detail = lastLines(ev.LogTail, 20)
	}
	if ev.Path != "" {
		e.Detail = ev.Path
	}
	if ev.Attempt > 0 {
		e.Attempt = ev.Attempt
		e.DurationMS = ev.Delay.Milliseconds()
	}
	d.emit(e)
	d.refreshRoutesAsync()
}
