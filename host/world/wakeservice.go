package world

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// Per-service wake: a cmd service with a url and wake = true is recorded
// by up but not started (parkService); its route meets proxy.StateWake,
// and the proxy's first request asks WakeService to start it, after what
// it depends on, admitted as an up is. With idle_suspend it is stopped
// again after that long with no proxied request and no proxied
// connection open (the idle timers below), and waits for its next
// request.

// WaitsForRequest is the reason status gives a wake service that does
// not run: its first request through the proxy starts it.
const WaitsForRequest = api.ReasonWaits

// parkService records a wake service up leaves waiting: its ports, URL,
// spec hash and run spec (the one its wake starts: a wake has no caller
// of its own), in state stopped, with no process.
func (e *Engine) parkService(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, coords map[string]string) error {
	spec, err := e.serviceSpec(w, rec, svc, coords)
	if err != nil {
		return err
	}
	if err := e.reg.UpsertService(ctx, &registry.Service{
		WorktreeID: rec.ID, Name: svc.Name, Kind: registry.KindCmd, State: state.ServiceStopped,
		Ports: w.plan[svc.Name], URL: coords[svc.Name+".url"], SpecHash: e.specHash(w, rec, svc, coords),
	}); err != nil {
		return fmt.Errorf("record service %s: %w", svc.Name, err)
	}
	if err := e.reg.SetServiceSpec(ctx, rec.ID, svc.Name, SpecJSON(spec)); err != nil {
		return fmt.Errorf("record the run of %s: %w", svc.Name, err)
	}
	s.Progress("wait", svc.Name, WaitsForRequest)
	return nil
}

// waiting reports whether the wake service name of the serving world rec
// waits for a request: in the world's selection, not stopped by binky
// stop, and without a live process (never started, stopped by its idle
// timer, or ended: a request starts it again).
func (e *Engine) waiting(cfg *config.Config, rec *registry.Worktree, sv *registry.Service) bool {
	c, ok := cfg.Services[sv.Name]
	if !ok || !c.Wake || c.URL == "" || sv.Stopped || !rec.State.Serving() || !selectionOf(cfg, rec.Selection).in(sv.Name) {
		return false
	}
	st, known := e.sup.State(e.SupKey(rec.Project, rec.Name, sv.Name))
	return !known || !st.State.Live()
}

// wakeRoute is what a request to the url service sv meets, given meets
// from its state: proxy.StateWake when it waits for a request.
func (e *Engine) wakeRoute(cfg *config.Config, rec *registry.Worktree, sv *registry.Service, meets proxy.RouteState) proxy.RouteState {
	if meets != proxy.StateSuspended && e.waiting(cfg, rec, sv) {
		return proxy.StateWake
	}
	return meets
}

// wakeOrder is service and every cmd service it depends on, directly or
// not, in start order.
func wakeOrder(cfg *config.Config, service string) []string {
	need := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if need[n] {
			return
		}
		need[n] = true
		if s := cfg.Services[n]; s != nil {
			for _, d := range s.DependsOn {
				walk(d)
			}
		}
	}
	walk(service)
	var out []string
	for _, level := range cfg.StartOrder() {
		for _, n := range level {
			if need[n] && !cfg.Services[n].IsAdapter() {
				out = append(out, n)
			}
		}
	}
	return out
}

// WakeService starts the wake service of an up world that a request
// through the proxy asks for, after each cmd service it depends on that
// does not run, in start order, each waited healthy, from the run specs
// up recorded. The start passes through admission as an up does (a
// world that runs holds its place: it is admitted at once). ctx ends when
// no client waits any more: a wake still queued leaves the queue; one
// admitted finishes its start. A service that runs already is left so
// (a second wake of it, or of another with the same dependency, starts
// nothing twice).
func (w *Waker) WakeService(ctx context.Context, project, worktree, service string) error {
	e := (*Engine)(w)
	rec, err := e.reg.Worktree(ctx, project, worktree)
	if err != nil {
		return err
	}
	cfg, err := e.Config(rec)
	if err != nil {
		return err
	}
	if c, ok := cfg.Services[service]; !ok || !c.Wake {
		return fmt.Errorf("%s of %s does not start on request (no wake = true)", service, worktree)
	}
	key := Key(project, worktree)
	if e.adm != nil && !e.admOff {
		if _, err := e.adm.Acquire(ctx, key, projectLimits(cfg), false, nil); err != nil {
			return err
		}
		defer e.adm.Done(key)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wakeStartLimit)
	defer cancel()
	m := e.WorldLock(project, worktree)
	if err := m.Lock(sctx, nil, "wake", service); err != nil {
		return err
	}
	defer m.Unlock()
	started, err := e.wakeLocked(sctx, cfg, rec.ID, service)
	if len(started) > 0 {
		e.routes.Refresh(sctx)
	}
	if err != nil {
		// The proxy's error page shows it.
		return fmt.Errorf("%s", OneLine(e.redact.String(err.Error())))
	}
	if len(started) > 0 {
		e.events.Emit(events.Event{Event: events.WorldWoken, Project: project, Worktree: worktree, Service: service, Detail: "started " + strings.Join(started, ", ")})
	}
	return nil
}

// wakeLocked is WakeService under the world's lock: it returns the
// services it started.
func (e *Engine) wakeLocked(ctx context.Context, cfg *config.Config, id int64, service string) ([]string, error) {
	rec, err := e.reg.WorktreeByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !rec.State.Serving() {
		return nil, fmt.Errorf("world %s is %s: binky up %s first", rec.Name, rec.State, rec.Name)
	}
	sel := selectionOf(cfg, rec.Selection)
	if !sel.in(service) {
		return nil, fmt.Errorf("%s is left out of %s (%s)", service, rec.Name, sel.why)
	}
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	byName := map[string]*registry.Service{}
	for _, sv := range svcs {
		byName[sv.Name] = sv
	}
	var started []string
	for _, name := range wakeOrder(cfg, service) {
		key := e.SupKey(rec.Project, rec.Name, name)
		if st, ok := e.sup.State(key); ok && st.State.Live() {
			continue
		}
		sv := byName[name]
		switch {
		case sv == nil || sv.Spec == "":
			return started, fmt.Errorf("%s has no recorded run: binky up %s records it", name, rec.Name)
		case sv.Stopped && name != service:
			return started, fmt.Errorf("%s depends on %s, which binky stop stopped: binky start %s %s", service, name, rec.Name, name)
		case sv.Stopped:
			return started, fmt.Errorf("%s was stopped by binky stop: binky start %s %s", name, rec.Name, name)
		}
		var spec supervisor.Spec
		if err := json.Unmarshal([]byte(sv.Spec), &spec); err != nil {
			return started, fmt.Errorf("read the recorded run of %s: %w (run binky up %s)", name, err, rec.Name)
		}
		if err := e.runSpec(ctx, nil, name, spec); err != nil {
			return started, err
		}
		started = append(started, name)
		if c := cfg.Services[name]; c.Wake && c.IdleSuspend > 0 {
			e.woken.arm(e, rec.Project, rec.Name, name, c.IdleSuspend, wakeDeps(cfg, name))
		}
	}
	return started, nil
}

// wakeDeps are the wake services name depends on, directly or not: a
// request to name keeps them from idling out under it.
func wakeDeps(cfg *config.Config, name string) []string {
	var out []string
	for _, n := range wakeOrder(cfg, name) {
		if n != name && cfg.Services[n].Wake {
			out = append(out, n)
		}
	}
	return out
}

// TouchService records a proxied request to a service (its idle_suspend
// and that of the wake services it depends on).
func (w *Waker) TouchService(project, worktree, service string) {
	(*Engine)(w).woken.touch(project, worktree, service)
}

// wokenSet holds the idle timers of the woken services with
// idle_suspend, by project/worktree/service.
type wokenSet struct {
	mu  sync.Mutex
	m   map[string]*wokenService
	now func() time.Time // the clock; time.Now if nil (tests set it)
}

func (ws *wokenSet) clock() time.Time {
	if ws.now != nil {
		return ws.now()
	}
	return time.Now()
}

type wokenService struct {
	project, worktree, service string
	idle                       time.Duration
	last                       time.Time
	deps                       []string // wake services it depends on
	timer                      *time.Timer
}

func wokenKey(project, worktree, service string) string {
	return project + "/" + worktree + "/" + service
}

// arm starts (or restarts) the idle timer of a woken service.
func (ws *wokenSet) arm(e *Engine, project, worktree, service string, idle time.Duration, deps []string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*wokenService{}
	}
	k := wokenKey(project, worktree, service)
	if old := ws.m[k]; old != nil {
		old.timer.Stop()
	}
	sv := &wokenService{project: project, worktree: worktree, service: service, idle: idle, last: ws.clock(), deps: deps}
	sv.timer = time.AfterFunc(idle, func() { e.idleCheck(sv) })
	ws.m[k] = sv
}

// armAdopted starts the idle timers of the woken services of an up world
// a restarted daemon found running (their idle time counts from now).
func (e *Engine) armAdopted(rec *registry.Worktree, cfg *config.Config) {
	if rec.State != state.WorldUp {
		return
	}
	for _, name := range cfg.Order {
		c := cfg.Services[name]
		if !c.Wake || c.IdleSuspend <= 0 {
			continue
		}
		if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, name)); ok && st.State.Live() {
			e.woken.arm(e, rec.Project, rec.Name, name, c.IdleSuspend, wakeDeps(cfg, name))
		}
	}
}

// touch records a request to service and to the wake services it
// depends on.
func (ws *wokenSet) touch(project, worktree, service string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	sv := ws.m[wokenKey(project, worktree, service)]
	if sv == nil {
		return
	}
	now := ws.clock()
	sv.last = now
	for _, d := range sv.deps {
		if dv := ws.m[wokenKey(project, worktree, d)]; dv != nil {
			dv.last = now
		}
	}
}

// due takes sv out of the set when it has been idle for its
// idle_suspend; otherwise it sets its timer for the rest. open and ended
// are the proxy's connections to it (Routes.Activity): while one is open
// it is not idle, and its idle time counts from when the last closed.
func (ws *wokenSet) due(sv *wokenService, open int, ended time.Time) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m[wokenKey(sv.project, sv.worktree, sv.service)] != sv {
		return false // re-armed or forgotten meanwhile
	}
	if open > 0 {
		// A WebSocket or stream still in use (a dev server's live
		// reload): look again after idle_suspend.
		sv.last = ws.clock()
		sv.timer.Reset(sv.idle)
		return false
	}
	if ended.After(sv.last) {
		sv.last = ended
	}
	if left := sv.idle - ws.clock().Sub(sv.last); left > 0 {
		sv.timer.Reset(left)
		return false
	}
	delete(ws.m, wokenKey(sv.project, sv.worktree, sv.service))
	return true
}

// drop stops the idle timer of one service (binky stop: what the user
// stopped is not the timer's to stop, nor to record waiting later).
func (ws *wokenSet) drop(project, worktree, service string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k := wokenKey(project, worktree, service)
	if sv := ws.m[k]; sv != nil {
		sv.timer.Stop()
		delete(ws.m, k)
	}
}

// armed reports whether service has an idle timer set.
func (ws *wokenSet) armed(project, worktree, service string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.m[wokenKey(project, worktree, service)] != nil
}

// forget drops the idle timers of a world's services (down, remove).
func (ws *wokenSet) forget(project, worktree string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for k, sv := range ws.m {
		if sv.project == project && sv.worktree == worktree {
			sv.timer.Stop()
			delete(ws.m, k)
		}
	}
}

// idleCheck stops a woken service idle for its idle_suspend (no request,
// no proxied connection open): it waits for its next request again (not
// "stopped by binky stop"). A woken service that depends on it and runs
// keeps it running.
func (e *Engine) idleCheck(sv *wokenService) {
	open, ended := e.routes.Activity(sv.project, sv.worktree, sv.service)
	if !e.woken.due(sv, open, ended) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wakeStartLimit)
	defer cancel()
	m := e.WorldLock(sv.project, sv.worktree)
	if err := m.Lock(ctx, nil, "idle stop", sv.service); err != nil {
		return
	}
	defer m.Unlock()
	if e.woken.armed(sv.project, sv.worktree, sv.service) {
		// While it waited for the lock, binky start (or a wake) started
		// the service again, with a timer of its own.
		return
	}
	rec, err := e.reg.Worktree(ctx, sv.project, sv.worktree)
	if err != nil {
		return
	}
	switch rec.State {
	case state.WorldUp:
	case state.WorldSuspended:
		// Stopped with its world: it idles again once the world resumes.
		e.woken.arm(e, sv.project, sv.worktree, sv.service, sv.idle, sv.deps)
		return
	default:
		return
	}
	cfg, err := e.Config(rec)
	if err != nil {
		return
	}
	for _, other := range cfg.Order {
		c := cfg.Services[other]
		if other == sv.service || !c.Wake || !slices.Contains(wakeDeps(cfg, other), sv.service) {
			continue
		}
		if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, other)); ok && st.State.Live() {
			e.woken.arm(e, sv.project, sv.worktree, sv.service, sv.idle, sv.deps) // its dependent still runs
			return
		}
	}
	if rs, err := e.reg.Service(ctx, rec.ID, sv.service); err != nil || rs.Stopped {
		return // binky stop stopped it meanwhile: it stays so
	}
	key := e.SupKey(rec.Project, rec.Name, sv.service)
	if st, ok := e.sup.State(key); !ok || !st.State.Live() {
		return
	}
	e.log.Info("stopping an idle woken service", "world", rec.Name, "service", sv.service, "idle_suspend", sv.idle)
	err = e.sup.Stop(ctx, key)
	e.routes.Refresh(ctx) // its route wakes it again
	if err != nil {
		e.log.Warn("stop an idle woken service", "world", rec.Name, "service", sv.service, "error", err)
		return
	}
	if err := e.reg.SetServiceState(ctx, rec.ID, sv.service, state.ServiceStopped, nil, ""); err != nil {
		e.log.Warn("record an idle woken service stopped", "world", rec.Name, "service", sv.service, "error", err)
	}
}

var _ proxy.ServiceWaker = (*Waker)(nil)

// wakeStatus marks a wake service that waits for its request in status.
func wakeStatus(out *api.Service) {
	out.State, out.Reason, out.LogTail = state.ServiceStopped, WaitsForRequest, nil
}
