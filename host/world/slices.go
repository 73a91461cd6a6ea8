package world

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// sliceName is an adapter service's slice: <project>_<worktree>, with the
// service name added when another adapter service of the world is served by
// the same implementation (postgres and postgresql, mariadb and percona,
// redis and valkey are one implementation each), so a slice belongs to one
// service. A slice already recorded for the service keeps its name.
func (e *Engine) sliceName(ctx context.Context, cfg *config.Config, worktree string, svc *config.Service) string {
	impl := e.implementation(ctx, svc.Adapter)
	for _, other := range cfg.Order {
		o := cfg.Services[other]
		if o.Name != svc.Name && o.IsAdapter() && (o.Adapter == svc.Adapter || e.implementation(ctx, o.Adapter) == impl) {
			return names.Slice(cfg.Project.Name, worktree+"-"+svc.Name)
		}
	}
	return names.Slice(cfg.Project.Name, worktree)
}

// implementation is the adapter implementation that answers to name (its
// describe name), or name itself when none is found.
func (e *Engine) implementation(ctx context.Context, name string) string {
	if info, err := e.adapter.Find(ctx, name); err == nil {
		if info.Implementation != "" {
			return info.Implementation
		}
		return info.Name
	}
	return name
}

// target builds the adapter request target of a service's slice.
func (e *Engine) target(w *world, svc *config.Service, sliceName string, coords map[string]string) sdk.Target {
	cfgVals := map[string]any{}
	for k, v := range svc.Config {
		if s, ok := v.(string); ok {
			cfgVals[k] = w.render(s, svc.Name, coords)
		} else {
			cfgVals[k] = v
		}
	}
	return sdk.Target{
		Slice:      sliceName,
		Project:    w.project,
		AdminURL:   w.render(svc.AdminURL, svc.Name, coords),
		DataDir:    e.dataDir(svc.Adapter),
		Config:     cfgVals,
		Owner:      e.homeID,
		OwnerLabel: e.ownerLabel(),
	}
}

// openAdapter opens the adapter of a service with its timeout.
func (e *Engine) openAdapter(ctx context.Context, svc *config.Service) (AdapterConn, error) {
	c, err := e.adapter.Open(ctx, svc.Adapter, svc.Timeout)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalid, "service %s: %w", svc.Name, err)
	}
	return c, nil
}

// recordedAs is how a slice's service is recorded with it: its admin_url
// and config as binky.toml wrote them (tokens unresolved: no secret), so
// remove reaches the slice after the service left binky.toml.
func recordedAs(svc *config.Service) (admin, cfg string) {
	admin = svc.AdminURL
	if admin == "" {
		admin = "-" // recorded, and empty (an adapter that keeps files)
	}
	if len(svc.Config) > 0 {
		if b, err := json.Marshal(svc.Config); err == nil {
			cfg = string(b)
		}
	}
	return admin, cfg
}

// ensureSlice makes a service's slice exist and returns where it lives. A
// slice provisioned by an earlier up is reused (down keeps slices) once the
// adapter confirms it is still there; one that vanished from the server is
// built again and the progress says so. The slice is recorded (state
// provisioning, with its name and adapter) before it is made, so an up that
// fails halfway leaves a record that remove drops and the next up rebuilds.
// It reports whether the slice was made (or made again) rather than
// reused, so the world's dependents of a rebuilt slice are restarted.
func (e *Engine) ensureSlice(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service) (slice, bool, error) {
	old, err := e.reg.Service(ctx, rec.ID, svc.Name)
	have := err == nil && old.Kind == registry.KindAdapter && (old.Adapter == "" || old.Adapter == svc.Adapter)
	name := ""
	if have && old.Slice != "" {
		name = old.Slice
	} else {
		name = e.sliceName(ctx, w.cfg, w.worktree, svc)
	}
	conn, err := e.openAdapter(ctx, svc)
	if err != nil {
		return slice{}, false, err
	}
	defer conn.Close()
	t := e.target(w, svc, name, w.coords())

	if have && old.State == state.ServiceProvisioned && old.Address != "" {
		sl, changed, there, err := e.verifySlice(ctx, s, conn, rec, svc, old, t)
		if err != nil || there {
			return sl, changed, err
		}
		have = false
	}
	admin, cfgJSON := recordedAs(svc)
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindAdapter, State: state.ServiceProvisioning,
		Slice: name, Adapter: svc.Adapter, Admin: admin, Config: cfgJSON,
	}); err != nil {
		return slice{}, false, fmt.Errorf("record the slice of %s before making it (nothing was made): %w", svc.Name, err)
	}
	if have && (old.State == state.ServiceProvisioning || old.State == state.ServiceFailed) || svc.CloneFrom != "" {
		// Half made by an earlier up, or (re)created empty by the check
		// above: clear it, so the clone or the migrate starts clean.
		if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: t}); err != nil {
			return slice{}, false, api.Errorf(api.CodeFailed, "clear %s slice %q of %s before building it: %w", svc.Adapter, name, svc.Name, err)
		}
	}

	var sl slice
	if svc.CloneFrom != "" {
		sl, err = e.sliceFromGolden(ctx, s, w, rec, svc, conn, name)
	} else {
		sl, err = e.buildSlice(ctx, s, w, rec, svc, conn, name)
	}
	if err != nil {
		return slice{}, false, err
	}
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindAdapter, State: state.ServiceProvisioned,
		Address: sl.Address, Values: sl.Values, Slice: name, Adapter: svc.Adapter,
	}); err != nil {
		return slice{}, false, fmt.Errorf("record slice of %s: %w", svc.Name, err)
	}
	if err := e.recordMade(ctx, w, rec, svc); err != nil {
		return slice{}, false, err
	}
	return sl, true, nil
}

// verifySlice checks that a slice recorded as provisioned is still on its
// server (provision is idempotent: it also hands the slice its adapter's
// config) and resolves it again: an address or a credential that changed
// on the server reaches the world's services, instead of the one recorded
// at the first up. It reports whether the slice is there, and whether its
// address or values changed; a slice gone from the server is said so, to
// be built again.
func (e *Engine) verifySlice(ctx context.Context, s Progress, conn AdapterConn, rec *registry.Worktree, svc *config.Service, old *registry.Service, t sdk.Target) (sl slice, changed, there bool, err error) {
	res, err := conn.Provision(ctx, &sdk.ProvisionRequest{Target: t})
	if err != nil {
		return slice{}, false, false, api.Errorf(api.CodeFailed, "check %s slice %q of %s: %w", svc.Adapter, t.Slice, svc.Name, err)
	}
	if res.Existed != nil && !*res.Existed {
		e.events.Emit(events.Event{Event: events.SliceVanished, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, Detail: t.Slice})
		s.Progress("provision", svc.Name, "slice "+t.Slice+" is gone from the server; building it again")
		return slice{}, false, false, nil
	}
	if sl, err = e.resolveSlice(ctx, conn, svc, t); err != nil {
		return slice{}, false, false, err
	}
	admin, cfgJSON := recordedAs(svc)
	changed = sl.Address != old.Address || !maps.Equal(sl.Values, old.Values)
	if changed || old.Slice == "" || old.Admin == "" || old.Config != cfgJSON {
		if err := e.reg.UpsertService(ctx, &registry.Service{WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindAdapter, Address: sl.Address, Values: sl.Values, Slice: t.Slice, Adapter: svc.Adapter, Admin: admin, Config: cfgJSON}); err != nil {
			return slice{}, false, false, fmt.Errorf("record the slice of %s: %w", svc.Name, err)
		}
	}
	if changed {
		// New credentials (a server that lost the slice user, an adapter
		// secret rotated, owner_role turned on): what depends on the
		// slice restarts with them instead of failing with the old ones.
		s.Progress("provision", svc.Name, "the slice's address or credentials changed on the server; what depends on it restarts with the new ones")
	}
	return sl, changed, true, nil
}

// buildSlice is the slow path: provision, resolve, migrate, seed.
func (e *Engine) buildSlice(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, conn AdapterConn, name string) (slice, error) {
	ev := events.Event{Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter}
	s.Progress("provision", svc.Name, name)
	t := e.target(w, svc, name, w.coords())
	if _, err := conn.Provision(ctx, &sdk.ProvisionRequest{Target: t}); err != nil {
		ev.Event, ev.Error = events.SliceFailed, err.Error()
		e.events.Emit(ev)
		return slice{}, api.Errorf(api.CodeFailed, "provision %s slice %q for %s: %w", svc.Adapter, name, svc.Name, err)
	}
	ev.Event = events.SliceProvisioned
	e.events.Emit(ev)
	sl, err := e.resolveSlice(ctx, conn, svc, t)
	if err != nil {
		return slice{}, err
	}
	if err := e.migrateAndSeed(ctx, s, w, rec, svc, sl); err != nil {
		return slice{}, err
	}
	return sl, nil
}

func (e *Engine) resolveSlice(ctx context.Context, conn AdapterConn, svc *config.Service, t sdk.Target) (slice, error) {
	res, err := conn.Resolve(ctx, &sdk.ResolveRequest{Target: t})
	if err != nil {
		return slice{}, api.Errorf(api.CodeFailed, "resolve %s slice %q for %s: %w", svc.Adapter, t.Slice, svc.Name, err)
	}
	if res.Address == "" {
		return slice{}, api.Errorf(api.CodeFailed, "resolve %s slice %q for %s: the adapter returned no address", svc.Adapter, t.Slice, svc.Name)
	}
	sl := slice{Address: res.Address, Values: res.Values}
	e.redactSlice(sl, res.Secret...)
	return sl, nil
}

// redactAddress registers the credentials inside an address (a URL's
// password, a DSN's, a password= parameter) as secrets, so a per-slice
// credential an adapter generated never reaches a log.
func (e *Engine) redactAddress(addr string) {
	e.redact.AddAddress(addr)
}

// redactSlice registers the credentials in a slice's address and values
// (the mysql adapter's dsn value carries one), and as a whole secret each
// value whose key the adapter listed in secret or whose key names a
// password (the registry keeps values, not the list: a slice read back
// from it relies on the name).
func (e *Engine) redactSlice(sl slice, secret ...string) {
	e.redactAddress(sl.Address)
	for k, v := range sl.Values {
		e.redact.AddAddress(v)
		if slices.Contains(secret, k) || strings.Contains(strings.ToLower(k), "password") {
			e.redact.Add(v)
		}
	}
}

// migrateAndSeed runs a service's migrate then seed against sl.
func (e *Engine) migrateAndSeed(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, sl slice) error {
	return e.runSliceSteps(ctx, s, w, rec, svc, sl, true)
}

// runSliceSteps runs a service's migrate, then with seed its seed,
// against sl.
func (e *Engine) runSliceSteps(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, sl slice, seed bool) error {
	saved, had := w.slices[svc.Name]
	w.slices[svc.Name] = sl
	defer func() {
		if had {
			w.slices[svc.Name] = saved
		}
	}()
	coords := w.coords()
	steps := []struct{ name, cmd, done, failed string }{
		{"migrate", svc.Migrate, events.MigrateDone, events.MigrateFailed},
	}
	if seed {
		steps = append(steps, struct{ name, cmd, done, failed string }{"seed", svc.Seed, events.SeedDone, events.SeedFailed})
	}
	for _, step := range steps {
		if step.cmd == "" {
			continue
		}
		s.Progress(step.name, svc.Name, "")
		start := time.Now()
		err := e.runHook(ctx, w, rec, svc, step.name, step.cmd, coords)
		ev := events.Event{Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, DurationMS: time.Since(start).Milliseconds()}
		if err != nil {
			ev.Event, ev.Error = step.failed, err.Error()
			e.events.Emit(ev)
			return err
		}
		ev.Event = step.done
		e.events.Emit(ev)
	}
	return nil
}

// runHook runs a migrate or seed command in the worktree, its output
// appended to the service's log; a failure carries the last 20 lines.
func (e *Engine) runHook(ctx context.Context, w *world, rec *registry.Worktree, svc *config.Service, step, command string, coords map[string]string) error {
	command, env, err := e.hookCommand(w, rec, svc, command, coords)
	if err != nil {
		return err
	}
	logPath := filepath.Join(e.logDir(rec.Project, rec.Name), svc.Name+".log")
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
	// Its own process group, marked as the world's, with a deadline: a
	// migrate left behind by a killed daemon is found and ended by the
	// world's down or remove, and one that hangs does not hold up forever.
	ctx, cancel := context.WithTimeout(ctx, hookTimeout(svc))
	defer cancel()
	// A run of this step left by a killed daemon would race this one.
	if left := supervisor.EndMarked(supervisor.HookMarker(e.homeID, rec.Project, rec.Name, svc.Name, step), syscall.SIGTERM, 5*time.Second); len(left) > 0 {
		return api.Errorf(api.CodeFailed, "an earlier %s of %s (pid %s) is still running and would not stop", step, svc.Name, joinInts(left))
	}
	cmd := shellCommand(ctx, command)
	cmd.Dir = rec.Path
	cmd.Env = append(env, supervisor.MarkerEnv+"="+supervisor.HookMarker(e.homeID, rec.Project, rec.Name, svc.Name, step))
	out := e.redact.Writer(logf)
	cmd.Stdout = &teeTail{w: out, tail: &tail}
	cmd.Stderr = cmd.Stdout
	runErr := runGrouped(cmd)
	out.Close()
	if ctx.Err() == context.DeadlineExceeded {
		runErr = fmt.Errorf("stopped after %s, its time limit (set timeout on the service to allow more)", hookTimeout(svc))
	}
	if runErr != nil {
		return api.Errorf(api.CodeFailed, "%s of %s failed (%w); last lines of %s:\n%s", step, svc.Name, runErr, logPath, lastLines(strings.Split(strings.TrimRight(tail.String(), "\n"), "\n"), 20))
	}
	return nil
}

// hookTimeout bounds one migrate or seed: the service's timeout when it is
// longer, else 10 minutes.
func hookTimeout(svc *config.Service) time.Duration {
	return max(svc.Timeout, 10*time.Minute)
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

// recordMade records, with a slice just made, what it was made from: the
// golden key it was cloned from (clone_from) and the sum of the migrate it
// ran, so the next up's plan sees when either changes.
func (e *Engine) recordMade(ctx context.Context, w *world, rec *registry.Worktree, svc *config.Service) error {
	key := ""
	if svc.CloneFrom != "" {
		if k, _, err := goldenKey(w, svc, w.coords()); err == nil {
			key = k.Sum
		}
	}
	if err := e.reg.SetServiceInputs(ctx, rec.ID, svc.Name, key, migrateSum(svc, rec.Path)); err != nil {
		return fmt.Errorf("record what the slice of %s was made from: %w", svc.Name, err)
	}
	return nil
}
