package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// sliceName is an adapter service's slice: <project>_<worktree>, with the
// service name added when two services of the world use the same adapter.
func sliceName(cfg *config.Config, worktree string, svc *config.Service) string {
	for _, other := range cfg.Order {
		o := cfg.Services[other]
		if o.Name != svc.Name && o.IsAdapter() && o.Adapter == svc.Adapter {
			return names.Slice(cfg.Project.Name, worktree+"-"+svc.Name)
		}
	}
	return names.Slice(cfg.Project.Name, worktree)
}

// target builds the adapter request target of a service's slice.
func (d *Daemon) target(w *world, svc *config.Service, sliceName string, coords map[string]string) sdk.Target {
	cfgVals := map[string]any{}
	for k, v := range svc.Config {
		if s, ok := v.(string); ok {
			cfgVals[k] = w.render(s, svc.Name, coords)
		} else {
			cfgVals[k] = v
		}
	}
	return sdk.Target{
		Slice:    sliceName,
		Project:  w.project,
		AdminURL: w.render(svc.AdminURL, svc.Name, coords),
		DataDir:  filepath.Join(d.home, "data", svc.Adapter),
		Config:   cfgVals,
	}
}

// openAdapter opens the adapter of a service with its timeout.
func (d *Daemon) openAdapter(ctx context.Context, svc *config.Service) (*adapter.Conn, error) {
	var opts []adapter.OpenOption
	if svc.Timeout > 0 {
		opts = append(opts, adapter.WithTimeout(svc.Timeout))
	}
	c, err := d.adapter.Open(ctx, svc.Adapter, opts...)
	if err != nil {
		return nil, errorf(api.CodeInvalid, "service %s: %v", svc.Name, err)
	}
	return c, nil
}

// ensureSlice makes a service's slice exist and returns where it lives. A
// slice provisioned by an earlier up is reused: down keeps slices, and up
// after it provisions nothing.
func (d *Daemon) ensureSlice(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service) (slice, error) {
	if old, err := d.reg.Service(ctx, rec.ID, svc.Name); err == nil && old.Kind == registry.KindAdapter && old.State == "provisioned" && old.Address != "" {
		d.redactAddress(old.Address)
		return slice{Address: old.Address, Values: old.Values}, nil
	}
	name := sliceName(w.cfg, w.worktree, svc)
	conn, err := d.openAdapter(ctx, svc)
	if err != nil {
		return slice{}, err
	}
	defer conn.Close()

	var sl slice
	if svc.CloneFrom != "" {
		sl, err = d.sliceFromGolden(ctx, s, w, rec, svc, conn, name)
	} else {
		sl, err = d.buildSlice(ctx, s, w, rec, svc, conn, name)
	}
	if err != nil {
		return slice{}, err
	}
	if err := d.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindAdapter, State: "provisioned",
		Address: sl.Address, Values: sl.Values,
	}); err != nil {
		return slice{}, fmt.Errorf("record slice of %s: %w", svc.Name, err)
	}
	return sl, nil
}

// buildSlice is the slow path: provision, resolve, migrate, seed.
func (d *Daemon) buildSlice(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service, conn *adapter.Conn, name string) (slice, error) {
	ev := events.Event{Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter}
	s.progress("provision", svc.Name, name)
	t := d.target(w, svc, name, w.coords())
	if _, err := conn.Provision(ctx, &sdk.ProvisionRequest{Target: t}); err != nil {
		ev.Event, ev.Error = events.SliceFailed, err.Error()
		d.emit(ev)
		return slice{}, errorf(api.CodeFailed, "provision %s slice %q for %s: %v", svc.Adapter, name, svc.Name, err)
	}
	ev.Event = events.SliceProvisioned
	d.emit(ev)
	sl, err := d.resolveSlice(ctx, conn, svc, t)
	if err != nil {
		return slice{}, err
	}
	if err := d.migrateAndSeed(ctx, s, w, rec, svc, sl); err != nil {
		return slice{}, err
	}
	return sl, nil
}

func (d *Daemon) resolveSlice(ctx context.Context, conn *adapter.Conn, svc *config.Service, t sdk.Target) (slice, error) {
	res, err := conn.Resolve(ctx, &sdk.ResolveRequest{Target: t})
	if err != nil {
		return slice{}, errorf(api.CodeFailed, "resolve %s slice %q for %s: %v", svc.Adapter, t.Slice, svc.Name, err)
	}
	if res.Address == "" {
		return slice{}, errorf(api.CodeFailed, "resolve %s slice %q for %s: the adapter returned no address", svc.Adapter, t.Slice, svc.Name)
	}
	d.redactAddress(res.Address)
	return slice{Address: res.Address, Values: res.Values}, nil
}

// redactAddress registers the password inside an address as a secret, so a
// per-slice credential an adapter generated never reaches a log.
func (d *Daemon) redactAddress(addr string) {
	if i := strings.Index(addr, "://"); i >= 0 {
		rest := addr[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				d.redact.Add(pw)
			}
		}
	}
}

// migrateAndSeed runs a service's migrate then seed against sl.
func (d *Daemon) migrateAndSeed(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service, sl slice) error {
	saved, had := w.slices[svc.Name]
	w.slices[svc.Name] = sl
	defer func() {
		if had {
			w.slices[svc.Name] = saved
		}
	}()
	coords := w.coords()
	for _, step := range []struct{ name, cmd, done, failed string }{
		{"migrate", svc.Migrate, events.MigrateDone, events.MigrateFailed},
		{"seed", svc.Seed, events.SeedDone, events.SeedFailed},
	} {
		if step.cmd == "" {
			continue
		}
		s.progress(step.name, svc.Name, "")
		start := time.Now()
		err := d.runHook(ctx, w, rec, svc, step.name, w.render(step.cmd, svc.Name, coords), coords)
		ev := events.Event{Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, DurationMS: time.Since(start).Milliseconds()}
		if err != nil {
			ev.Event, ev.Error = step.failed, err.Error()
			d.emit(ev)
			return err
		}
		ev.Event = step.done
		d.emit(ev)
	}
	return nil
}

// runHook runs a migrate or seed command in the worktree, its output
// appended to the service's log; a failure carries the last 20 lines.
func (d *Daemon) runHook(ctx context.Context, w *world, rec *registry.Worktree, svc *config.Service, step, command string, coords map[string]string) error {
	env, err := d.serviceEnv(w, rec, svc, coords)
	if err != nil {
		return err
	}
	logPath := filepath.Join(d.logDir(rec.Project, rec.Name), svc.Name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log of %s: %w", svc.Name, err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- binky: %s %s at %s\n", step, svc.Name, time.Now().Format(time.RFC3339))
	var tail bytes.Buffer
	cmd := shellCommand(ctx, command)
	cmd.Dir = rec.Path
	cmd.Env = env
	out := d.redact.Writer(logf)
	cmd.Stdout = &teeTail{w: out, tail: &tail}
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	out.Close()
	if runErr != nil {
		return errorf(api.CodeFailed, "%s of %s failed (%v); last lines of %s:\n%s", step, svc.Name, runErr, logPath, lastLines(strings.Split(strings.TrimRight(tail.String(), "\n"), "\n"), 20))
	}
	return nil
}

// teeTail writes through to w and keeps the last 64 KiB for error reports.
type teeTail struct {
	w    io.Writer
	tail *bytes.Buffer
}

func (t *teeTail) Write(p []byte) (int, error) {
	t.tail.Write(p)
	if t.tail.Len() > 64<<10 {
		b := t.tail.Bytes()
		keep := append([]byte(nil), b[len(b)-32<<10:]...)
		t.tail.Reset()
		t.tail.Write(keep)
	}
	return t.w.Write(p)
}

func lastLines(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// shellCommand runs command through the platform shell.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, shellPath(), shellFlag(), command)
}
