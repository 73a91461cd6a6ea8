package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/state"
)

// Errors callers may test with errors.Is.
var (
	ErrShutdown   = errors.New("supervisor is shut down")
	ErrNotRunning = errors.New("service is not running")
	ErrEscaped    = errors.New("processes escaped the service's process group")
	// ErrPortChanged: Start was asked to run a service on another port (or
	// probe it at another address) than its running process was started
	// with. A running process never moves; only a restart moves it.
	ErrPortChanged = errors.New("a running service's port or probe address changes only by a restart")
)

// Options configure a Supervisor. Only Logger matters in production; the
// rest exist so tests can run the restart schedule fast.
type Options struct {
	Logger   hclog.Logger  // nil: discard
	Store    Store         // nil: nothing persisted
	OnEvent  func(Event)   // nil: no events; called from supervisor goroutines, must not block long
	Policy   Policy        // zero fields: DefaultPolicy's
	Debounce time.Duration // watch debounce; DefaultDebounce if 0
	Jitter   func() float64
	// Cgroups, when set, starts each service in its world's cgroup (see
	// OpenCgroups); nil tracks processes by group and marker only.
	Cgroups *Cgroups
	// HealthEvery is how often a running service's probe is repeated
	// (DefaultHealthEvery if 0); UnhealthyAfter is how many failures in a
	// row turn it unhealthy (DefaultUnhealthyAfter if 0).
	HealthEvery    time.Duration
	UnhealthyAfter int
	// Logs tune rolling and dating the logs of running services.
	Logs LogOptions
}

// Supervisor runs the cmd services of every world of one daemon.
type Supervisor struct {
	log      hclog.Logger
	store    Store
	onEvent  func(Event)
	policy   Policy
	debounce time.Duration
	jitter   func() float64
	cgroups  *Cgroups
	logs     *logKeeper

	healthEvery    time.Duration
	unhealthyAfter int

	ctx    context.Context // ended by Shutdown
	cancel context.CancelFunc

	mu     sync.Mutex
	units  map[Key]*unit
	closed bool

	// The periodic health probes of every service go on one clock
	// (monitor.go: beat), so the daemon wakes once a round, not once a
	// service.
	beatMu sync.Mutex
	beatCh chan struct{} // closed at the next round
}

// unit is one service and the runner goroutine that owns it while active.
// Fields after log are guarded by Supervisor.mu.
type unit struct {
	key Key
	log hclog.Logger

	spec     Spec
	state    state.Service
	run      *run
	restarts int
	lastExit *Exit
	reason   string // why the state is what it is (unhealthy: which probe, how long)
	since    time.Time
	active   bool          // a runner goroutine owns the unit
	stopReq  chan struct{} // closed (once) to ask the runner to stop
	stopOnce *sync.Once
	done     chan struct{} // closed when the runner has returned
	stopErr  error
}

// New returns a Supervisor with nothing running.
func New(opts Options) *Supervisor {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	jitter := opts.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	ctx, cancel := context.WithCancel(context.Background())
	every, after := opts.HealthEvery, opts.UnhealthyAfter
	if every <= 0 {
		every = DefaultHealthEvery
	}
	if after <= 0 {
		after = DefaultUnhealthyAfter
	}
	s := &Supervisor{
		healthEvery: every, unhealthyAfter: after,
		log: log.Named("supervisor"), store: opts.Store, onEvent: opts.OnEvent,
		policy: opts.Policy.withDefaults(), debounce: opts.Debounce, jitter: jitter, cgroups: opts.Cgroups,
		logs: newLogKeeper(opts.Logs),
		ctx:  ctx, cancel: cancel, units: map[Key]*unit{},
		beatCh: make(chan struct{}),
	}
	go s.keepLogs()
	go s.beat()
	return s
}

// Start spawns the service and returns once its process runs (or could not be
// started). The process outlives ctx. A service this supervisor already runs
// is left alone (Stop it first to apply a new Spec; a Start racing a Stop
// waits for the Stop, then starts), unless spec would have it listen or be
// probed elsewhere than its process was started with: that Start fails
// with ErrPortChanged, since WaitHealthy and the monitor would otherwise
// vouch for the old address under the new one. One that exited, failed,
// was lost or was stopped starts fresh, its restart count reset. Await
// readiness with WaitHealthy.
func (s *Supervisor) Start(ctx context.Context, spec Spec) error {
	spec, err := spec.normalize()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start %s: %w", spec.Key, err)
	}
	u, err := s.claim(spec)
	if err != nil || u == nil {
		return err
	}
	s.endStrays(u, spec)
	w := s.openWatch(u, spec)
	r, err := s.spawn(u, spec)
	if err != nil {
		if w != nil {
			w.close()
		}
		exit := Exit{Code: -1, Err: err.Error(), State: state.ServiceFailed, At: time.Now()}
		s.recordExit(u, exit)
		s.emit(Event{Name: EventFailed, Key: spec.Key, ExitCode: -1, Error: err.Error()})
		s.finish(u)
		return err
	}
	go s.runUnit(u, spec, r, 0, w)
	return nil
}

// claim marks the unit for spec active and resets it for a fresh start. It
// returns nil (and no error) when a runner already owns the unit; a unit
// being stopped is waited for and then claimed.
func (s *Supervisor) claim(spec Spec) (*unit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return nil, fmt.Errorf("start %s: %w", spec.Key, ErrShutdown)
		}
		u := s.units[spec.Key]
		if u == nil || !u.active {
			break
		}
		select {
		case <-u.stopReq: // being stopped: start again once it is down
			done := u.done
			s.mu.Unlock()
			<-done
			s.mu.Lock()
		default:
			return nil, u.moved(spec)
		}
	}
	u := s.units[spec.Key]
	if u == nil {
		k := spec.Key
		u = &unit{key: k, log: s.log.With("project", k.Project, "worktree", k.Worktree, "service", k.Service)}
		s.units[k] = u
	}
	u.active = true
	u.spec = spec
	u.state = state.ServiceStarting
	u.reason = ""
	u.run = nil
	u.restarts = 0
	u.since = time.Now()
	u.stopReq = make(chan struct{})
	u.stopOnce = new(sync.Once)
	u.done = make(chan struct{})
	u.stopErr = nil
	return u, nil
}

// finish releases the unit once its runner (or a failed Start) is done.
func (s *Supervisor) finish(u *unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.active = false
	close(u.done)
}

// Stop stops the service's whole process group: the stop signal, then
// SIGKILL after StopTimeout. It returns only when no live process is left
// in the group (or ctx ends). A service that is not running is not an error.
// Descendants that escaped into a session of their own are reported by pid
// in an error wrapping ErrEscaped; they are left running.
func (s *Supervisor) Stop(ctx context.Context, key Key) error {
	s.mu.Lock()
	u := s.units[key]
	if u == nil || !u.active {
		s.mu.Unlock()
		return nil
	}
	u.stopOnce.Do(func() { close(u.stopReq) })
	done := u.done
	s.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("stop %s: %w (it is still being stopped)", key, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return u.stopErr
}

// State returns the status of one service; false if this supervisor has
// never seen it.
func (s *Supervisor) State(key Key) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.units[key]
	if u == nil {
		return Status{Key: key}, false
	}
	return u.status(), true
}

// Statuses returns the status of every service seen, sorted by key.
func (s *Supervisor) Statuses() []Status {
	s.mu.Lock()
	out := make([]Status, 0, len(s.units))
	for _, u := range s.units {
		out = append(out, u.status())
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}

// status must be called with Supervisor.mu held.
func (u *unit) status() Status {
	st := Status{Key: u.key, State: u.state, Reason: u.reason, Restarts: u.restarts, Since: u.since}
	if u.lastExit != nil {
		e := *u.lastExit
		st.LastExit = &e
	}
	if r := u.run; r != nil && !r.hasExited() {
		st.Pid, st.Pgid, st.StartTime = r.pid, r.pgid, r.startTime
		st.Port = envPort(u.spec)
	}
	return st
}

// HealthError is WaitHealthy's error: what failed and the end of the log.
type HealthError struct {
	Key     Key
	Err     error
	LogPath string
	LogTail []string
}

func (e *HealthError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "service %s is not healthy: %v", e.Key, e.Err)
	if len(e.LogTail) > 0 {
		fmt.Fprintf(&b, "\nlast %d lines of %s:", len(e.LogTail), e.LogPath)
		for _, l := range e.LogTail {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

func (e *HealthError) Unwrap() error { return e.Err }

// WaitHealthy waits until the current process of the service passes its
// health probe. Without a probe it returns at once, unless the process has
// already failed. The error is a *HealthError carrying the last 20 log lines.
func (s *Supervisor) WaitHealthy(ctx context.Context, key Key) error {
	s.mu.Lock()
	u := s.units[key]
	var r *run
	var spec Spec
	var st state.Service
	if u != nil {
		r, spec, st = u.run, u.spec, u.state
	}
	s.mu.Unlock()
	if r == nil {
		return fmt.Errorf("wait for %s to be healthy: %w (state %q)", key, ErrNotRunning, st)
	}
	select {
	case <-r.healthDone:
	case <-ctx.Done():
		return fmt.Errorf("wait for %s to be healthy: %w", key, ctx.Err())
	}
	err := r.healthErr
	if err == nil && spec.Health == nil && r.hasExited() && !r.exit.clean() {
		err = fmt.Errorf("process %d: %s", r.exit.Pid, r.exit.Err)
	}
	if err == nil {
		return nil
	}
	tail, _ := ReadLogs(spec.LogPath, 20)
	return &HealthError{Key: key, Err: err, LogPath: spec.LogPath, LogTail: tail}
}

// Shutdown stops supervising, for daemon exit: watchers and waiters end, the
// processes keep running for the next daemon to adopt. Start fails after it.
func (s *Supervisor) Shutdown() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	var dones []chan struct{}
	for _, u := range s.units {
		if u.active {
			dones = append(dones, u.done)
		}
	}
	s.mu.Unlock()
	s.cancel()
	for _, d := range dones {
		<-d
	}
	s.cgroups.Prune()
}

func (s *Supervisor) emit(ev Event) {
	s.log.Debug("event", "event", ev.Name, "service", ev.Key.String(), "pid", ev.Pid, "error", ev.Error)
	if s.onEvent != nil {
		s.onEvent(ev)
	}
}

// recordExit notes an exit on the unit and in the store: exactly once per
// process, from the goroutine that owns the unit.
func (s *Supervisor) recordExit(u *unit, exit Exit) {
	if exit.At.IsZero() {
		exit.At = time.Now()
	}
	s.mu.Lock()
	u.lastExit = &exit
	u.state = exit.State
	u.reason = ""
	u.since = exit.At
	s.mu.Unlock()
	if s.store != nil {
		if err := s.store.ProcessExited(u.key, exit); err != nil {
			u.log.Error("cannot record process exit", "pid", exit.Pid, "error", err)
		}
	}
}

func (s *Supervisor) setState(u *unit, st state.Service) {
	s.mu.Lock()
	u.state = st
	u.reason = ""
	u.since = time.Now()
	s.mu.Unlock()
}
