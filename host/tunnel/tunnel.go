package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/remote"
	"github.com/binkyhq/binky/host/state"
)

// Defaults of Options.
const (
	DefaultCheck      = 3 * time.Second  // how often the master is asked whether it lives
	DefaultPoll       = 20 * time.Second // how often the host's worlds are read unasked
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	DefaultBlock      = 64 // local ports set aside per host
)

// Lister reads the host's worlds (its daemon's status).
type Lister func(ctx context.Context) (*api.StatusResult, error)

// Ports sets aside local ports for a host's forwards, from the home's
// port range and leases, so they collide with no world's.
type Ports interface {
	Reserve(ctx context.Context, host string, n int) (lo, hi int, err error)
	Release(ctx context.Context, host string) error
}

// Options configure one host's tunnel.
type Options struct {
	Host   *remote.Host
	Home   string // the local BINKY_HOME (the control sockets)
	Runner Runner
	List   Lister
	Ports  Ports
	// Changed is called (never while a lock is held) when the routes or
	// the road's state change.
	Changed func()
	Logger  hclog.Logger

	Check, Poll            time.Duration
	MinBackoff, MaxBackoff time.Duration
	Block                  int
	// Wait sleeps d or until ctx ends; nil is a timer. Tests make it
	// instant.
	Wait func(ctx context.Context, d time.Duration) error
	// EndMaster ends a master this tunnel started, by pid, when it is
	// replaced or the tunnel ends; nil is a SIGTERM to that ssh.
	EndMaster func(pid int)
}

// Tunnel is one host's road: its master, forwards and the routes over
// them.
type Tunnel struct {
	o Options

	mu      sync.Mutex
	up      bool   // the master lives and the forwards are added
	lastErr string // why the road is down
	worlds  []api.World
	lo, hi  int
	fwd     map[int]int // the host's port → the local port (stable across reconnects)
	added   map[int]bool
	synced  bool
	torn    bool // teardown ran
	master  int  // the pid of the master this tunnel started (0: none known)

	syncs chan chan error
	ended chan struct{} // closed when Run returns
}

// New makes h's tunnel; Run drives it.
func New(o Options) *Tunnel {
	if o.Check <= 0 {
		o.Check = DefaultCheck
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Block <= 0 {
		o.Block = DefaultBlock
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Changed == nil {
		o.Changed = func() {}
	}
	if o.EndMaster == nil {
		o.EndMaster = endMaster
	}
	if o.Wait == nil {
		o.Wait = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	return &Tunnel{o: o, fwd: map[int]int{}, added: map[int]bool{}, syncs: make(chan chan error), ended: make(chan struct{})}
}

// errNoWorlds ends a tunnel: the host has no world this home reaches.
var errNoWorlds = errors.New("no world left on the host")

// ErrEnded is Sync's answer from a tunnel that has ended (the host had no
// world left, or the daemon stops): the caller starts a new one.
var ErrEnded = errors.New("the tunnel to the host ended")

// Sync asks the running tunnel to read the host's worlds now and bring
// the forwards and routes in line; it returns once that is done (or the
// road is down: the error says why).
func (t *Tunnel) Sync(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case t.syncs <- reply:
	case <-t.ended:
		return ErrEnded
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run keeps the road until ctx ends or the host has no world left, then
// cancels the forwards, ends the master and gives the ports back.
func (t *Tunnel) Run(ctx context.Context) error {
	defer close(t.ended)
	defer t.teardown()
	backoff := t.o.MinBackoff
	check := time.NewTicker(t.o.Check)
	defer check.Stop()
	poll := time.NewTicker(t.o.Poll)
	defer poll.Stop()
	var pending []chan error
	answer := func(err error) {
		for _, p := range pending {
			p <- err
		}
		pending = nil
	}
	defer func() { answer(ErrEnded) }()
	needSync := true
	for {
		if !t.isUp() {
			if err := t.connect(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				t.down(err)
				answer(err)
				t.o.Logger.Warn("reconnect to host failed; trying again", "error", err, "in", backoff)
				if t.waitOrSync(ctx, backoff, &pending) != nil {
					return ctx.Err()
				}
				backoff = min(2*backoff, t.o.MaxBackoff)
				continue
			}
			backoff = t.o.MinBackoff
			needSync = true
		}
		if needSync || len(pending) > 0 {
			err := t.sync(ctx)
			if errors.Is(err, errNoWorlds) {
				// Nothing is left here before the caller hears so.
				t.teardown()
				answer(nil)
				return nil
			}
			if err != nil && !t.alive(ctx) {
				t.down(fmt.Errorf("the ssh connection ended: %w", err))
				continue
			}
			answer(err)
			needSync = err != nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case p := <-t.syncs:
			pending = append(pending, p)
		case <-check.C:
			if !t.alive(ctx) {
				t.down(errors.New("the ssh connection ended"))
			}
		case <-poll.C:
			needSync = true
		}
	}
}

// waitOrSync waits d, taking sync requests meanwhile (they are answered
// once the road is back, or with the next failure).
func (t *Tunnel) waitOrSync(ctx context.Context, d time.Duration, pending *[]chan error) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- t.o.Wait(wctx, d) }()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			_ = err
			return nil
		case p := <-t.syncs:
			*pending = append(*pending, p)
		}
	}
}

func (t *Tunnel) isUp() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.up
}

// down marks the road down: the master is gone and its forwards with it.
func (t *Tunnel) down(err error) {
	t.mu.Lock()
	changed := t.up || t.lastErr != err.Error()
	t.up = false
	t.lastErr = err.Error()
	t.added = map[int]bool{}
	t.mu.Unlock()
	if changed {
		t.o.Changed()
	}
}

// alive asks the master whether it runs.
func (t *Tunnel) alive(ctx context.Context) bool {
	_, err := t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "check"))
	return err == nil
}

// connect starts the master (after ending a stale one) and adds the
// forwards it had.
func (t *Tunnel) connect(ctx context.Context) error {
	if t.alive(ctx) {
		// A master of a previous daemon, or one that came back: use it.
	} else {
		// One that lost its socket (or hangs) must not keep its forwards'
		// ports from the new one.
		t.mu.Lock()
		old := t.master
		t.master = 0
		t.mu.Unlock()
		t.o.EndMaster(old)
		if err := removeStale(controlPath(t.o.Host, t.o.Home)); err != nil {
			return err
		}
		if out, err := t.o.Runner.Run(ctx, masterArgv(t.o.Host, t.o.Home)); err != nil {
			return fmt.Errorf("start ssh to %s: %s", t.o.Host.Destination(), firstLine(out, err))
		}
	}
	out, _ := t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "check"))
	t.mu.Lock()
	t.master = MasterPid(out)
	t.up = true
	t.lastErr = ""
	t.added = map[int]bool{}
	t.mu.Unlock()
	if err := t.apply(ctx); err != nil {
		t.mu.Lock()
		t.up = false
		t.mu.Unlock()
		return err
	}
	t.o.Changed()
	return nil
}

// sync reads the host's worlds and brings the forwards in line.
func (t *Tunnel) sync(ctx context.Context) error {
	res, err := t.o.List(ctx)
	if err != nil {
		return fmt.Errorf("read the worlds of host %s: %w", t.o.Host.Name, err)
	}
	var keep []api.World
	for _, w := range res.Worlds {
		if reached(w) {
			keep = append(keep, w)
		}
	}
	t.mu.Lock()
	t.worlds = keep
	t.synced = true
	t.mu.Unlock()
	if len(keep) == 0 {
		return errNoWorlds
	}
	if err := t.reserve(ctx); err != nil {
		return err
	}
	err = t.apply(ctx)
	t.o.Changed()
	return err
}

// reached says whether a world of the host is reached from here: one
// that serves (up, starting, degraded, suspended to be woken there).
func reached(w api.World) bool {
	switch w.State {
	case state.WorldDown, state.WorldAbsent, state.WorldRemoving, state.WorldFailed, state.WorldStopping:
		return false
	}
	return true
}

func (t *Tunnel) reserve(ctx context.Context) error {
	t.mu.Lock()
	have := t.lo != 0
	t.mu.Unlock()
	if have {
		return nil
	}
	lo, hi, err := t.o.Ports.Reserve(ctx, t.o.Host.Name, t.o.Block)
	if err != nil {
		return fmt.Errorf("set aside local ports for host %s: %w", t.o.Host.Name, err)
	}
	t.mu.Lock()
	t.lo, t.hi = lo, hi
	t.mu.Unlock()
	return nil
}

// wanted is every host port the reached worlds use: each service's
// ports and the loopback ports of its address.
func wanted(worlds []api.World) []int {
	set := map[int]bool{}
	for _, w := range worlds {
		for _, s := range w.Services {
			if s.Port > 0 {
				set[s.Port] = true
			}
			for _, p := range s.Ports {
				if p > 0 {
					set[p] = true
				}
			}
			for _, p := range remote.LoopbackPorts(s.Address) {
				set[p] = true
			}
		}
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// apply adds the forwards the worlds want and cancels the rest. A host
// port keeps its local port for the tunnel's life.
func (t *Tunnel) apply(ctx context.Context) error {
	t.mu.Lock()
	if !t.up {
		t.mu.Unlock()
		return nil
	}
	want := wanted(t.worlds)
	wantSet := map[int]bool{}
	var add, cancel [][2]int
	for _, p := range want {
		wantSet[p] = true
		local, ok := t.fwd[p]
		if !ok {
			local = t.freeLocal()
			if local == 0 {
				t.o.Logger.Warn("no local port left for a forward", "host", t.o.Host.Name, "port", p)
				continue
			}
			t.fwd[p] = local
		}
		if !t.added[p] {
			add = append(add, [2]int{local, p})
		}
	}
	for p, local := range t.fwd {
		if !wantSet[p] {
			if t.added[p] {
				cancel = append(cancel, [2]int{local, p})
			}
			delete(t.fwd, p)
		}
	}
	t.mu.Unlock()
	var errs []error
	for _, c := range cancel {
		if out, err := t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "cancel", forwardSpec(c[0], c[1])...)); err != nil {
			errs = append(errs, fmt.Errorf("cancel the forward of port %d: %s", c[1], firstLine(out, err)))
		}
		t.mu.Lock()
		delete(t.added, c[1])
		t.mu.Unlock()
	}
	for _, a := range add {
		if out, err := t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "forward", forwardSpec(a[0], a[1])...)); err != nil {
			errs = append(errs, fmt.Errorf("forward local port %d to port %d of host %s: %s", a[0], a[1], t.o.Host.Name, firstLine(out, err)))
			continue
		}
		t.mu.Lock()
		t.added[a[1]] = true
		t.mu.Unlock()
	}
	return errors.Join(errs...)
}

// freeLocal is the lowest port of the block no forward holds (0 when
// none); t.mu is held.
func (t *Tunnel) freeLocal() int {
	if t.lo == 0 {
		return 0
	}
	used := map[int]bool{}
	for _, l := range t.fwd {
		used[l] = true
	}
	for p := t.lo; p <= t.hi; p++ {
		if !used[p] {
			return p
		}
	}
	return 0
}

// teardown cancels every forward, ends the master and gives the ports
// back: what a host with no world left (or a stopping daemon) leaves.
func (t *Tunnel) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.mu.Lock()
	if t.torn {
		t.mu.Unlock()
		return
	}
	t.torn = true
	var fwds [][2]int
	for p := range t.added {
		fwds = append(fwds, [2]int{t.fwd[p], p})
	}
	t.worlds, t.fwd, t.added, t.up = nil, map[int]int{}, map[int]bool{}, false
	had := t.lo != 0
	t.lo, t.hi = 0, 0
	t.mu.Unlock()
	for _, f := range fwds {
		t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "cancel", forwardSpec(f[0], f[1])...))
	}
	t.o.Runner.Run(ctx, controlArgv(t.o.Host, t.o.Home, "exit"))
	t.mu.Lock()
	pid := t.master
	t.master = 0
	t.mu.Unlock()
	t.o.EndMaster(pid)
	if had {
		if err := t.o.Ports.Release(ctx, t.o.Host.Name); err != nil {
			t.o.Logger.Warn("give back the forwards' ports", "host", t.o.Host.Name, "error", err)
		}
	}
	t.o.Changed()
}

// Routes are the proxy routes of the host's worlds: each url service's
// name to its forward, marked remote; StateReconnecting while the road is
// down.
func (t *Tunnel) Routes() []proxy.Route {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []proxy.Route
	for _, w := range t.worlds {
		for _, s := range w.Services {
			if s.URL == "" || s.Port == 0 {
				continue
			}
			u, err := url.Parse(s.URL)
			if err != nil || !strings.HasSuffix(strings.ToLower(u.Hostname()), ".localhost") {
				continue
			}
			rs := routeState(w, s)
			if !t.up {
				rs = proxy.StateReconnecting
			}
			// The local port is kept while the road is down (the proxy
			// needs a target; nothing is forwarded to it meanwhile).
			target := "127.0.0.1:0"
			if l, ok := t.fwd[s.Port]; ok {
				target = "127.0.0.1:" + strconv.Itoa(l)
			}
			if !t.added[s.Port] && rs == proxy.StateRunning {
				rs = proxy.StateReconnecting
			}
			out = append(out, proxy.Route{
				Host: u.Hostname(), Target: target, State: rs,
				Project: w.Project, Worktree: w.Worktree, Service: s.Name,
				Remote: t.o.Host.Name,
			})
		}
	}
	return out
}

func routeState(w api.World, s api.Service) proxy.RouteState {
	if w.State == state.WorldSuspended {
		return proxy.StateSuspended
	}
	switch s.State {
	case state.ServiceRunning:
		return proxy.StateRunning
	case state.ServiceStarting, state.ServiceProvisioning, state.ServiceProvisioned:
		return proxy.StateStarting
	case state.ServiceUnhealthy, state.ServiceBackoff:
		return proxy.StateRestarting
	case state.ServiceFailed, state.ServiceLost:
		return proxy.StateFailed
	}
	return proxy.StateDown
}

// Snapshot is what the tunnel holds, for status and env.
type Snapshot struct {
	Host     string
	Up       bool
	Error    string
	Worlds   []api.World
	Forwards map[int]int // the host's port → the local port, added
}

// Snapshot reads the tunnel's state.
func (t *Tunnel) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Host: t.o.Host.Name, Up: t.up, Error: t.lastErr, Worlds: slices.Clone(t.worlds), Forwards: map[int]int{}}
	for p, l := range t.fwd {
		if t.added[p] {
			s.Forwards[p] = l
		}
	}
	return s
}

func firstLine(out string, err error) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return err.Error()
	}
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	return out
}
