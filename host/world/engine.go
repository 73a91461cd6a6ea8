package world

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
)

// Engine runs the lifecycle of worlds: plan and apply an up, stop, remove,
// reset, restart and golden templates. The daemon builds one (New) and
// hands it what stays its own — the event log, finding and locking a world,
// admission, routes — as functions in Options. The engine keeps its
// supervisor: the daemon reaches the processes through the engine's
// methods (Suspend, Resume, WakeStart, ServiceState, Shutdown).
type Engine struct {
	home    string
	homeID  string
	log     hclog.Logger
	redact  *redact.Redactor
	reg     *registry.Registry
	ports   *ports.Allocator
	adapter Adapters
	sup     *supervisor.Supervisor
	cgroups *supervisor.Cgroups
	adm     *admission.Controller
	admOff  bool

	// The daemon's side, called by name as its methods were.
	emit               func(events.Event)
	findWorld          func(context.Context, api.WorldRef) (*registry.Worktree, error)
	lockWorld          func(ctx context.Context, s *Stream, op string, ref api.WorldRef) (*registry.Worktree, func(), error)
	worldLock          func(project, worktree string) *Lock
	repoLock           func(root string) *Lock
	admit              func(ctx context.Context, s *stream, cfg *config.Config, w *registry.Worktree, noWait bool) error
	released           func(project, wt string)
	beforeStop         func(context.Context, *registry.Worktree)
	refreshRoutes      func(context.Context)
	refreshRoutesAsync func()
	urlFor             func(*config.Config) func(string) string
	hostOf             func(*config.Config, *registry.Worktree) func(string) string

	// unfailed holds the ids of worlds Reconcile found mid-up but could
	// not mark failed (the registry took no writes); RecordLive retries.
	unfailedMu sync.Mutex
	unfailed   []int64

	goldens   KeyedLocks[sync.Mutex] // golden template name → builds a template once
	dataMoves KeyedLocks[sync.Mutex] // adapter alias → its data directory moved once at a time
	verifies  KeyedLocks[sync.Mutex] // project/worktree → one verify of a world at a time
}

// Options is what an Engine is built from. Every field is required except
// Cgroups (nil: processes tracked by group and marker only) and
// HealthEvery. The admission queue comes later (SetAdmission): it is
// started after the supervisor has re-adopted what runs.
type Options struct {
	Home     string
	HomeID   string // registry.HomeID: in process markers, port leases and slice claims
	Logger   hclog.Logger
	Redact   *redact.Redactor
	Registry *registry.Registry
	Ports    *ports.Allocator
	Adapters Adapters // HostAdapters of the daemon's *adapter.Host
	Cgroups  *supervisor.Cgroups
	// HealthEvery is how often a running service's probe repeats (0: the
	// supervisor's default).
	HealthEvery time.Duration
	// AdmissionOff: up and run skip the admission queue (the benchmark's
	// baseline, BINKY_TEST_ADMISSION=off).
	AdmissionOff bool

	Emit               func(events.Event)
	FindWorld          func(context.Context, api.WorldRef) (*registry.Worktree, error)
	LockWorld          func(ctx context.Context, s *Stream, op string, ref api.WorldRef) (*registry.Worktree, func(), error)
	WorldLock          func(project, worktree string) *Lock
	RepoLock           func(root string) *Lock
	Admit              func(ctx context.Context, s *Stream, cfg *config.Config, w *registry.Worktree, noWait bool) error
	Released           func(project, wt string)
	BeforeStop         func(context.Context, *registry.Worktree)
	RefreshRoutes      func(context.Context)
	RefreshRoutesAsync func()
	URLFor             func(*config.Config) func(string) string
	HostOf             func(*config.Config, *registry.Worktree) func(string) string
}

// New builds the engine and the supervisor its services run under.
func New(o Options) *Engine {
	e := &Engine{
		home: o.Home, homeID: o.HomeID, log: o.Logger, redact: o.Redact,
		reg: o.Registry, ports: o.Ports, adapter: o.Adapters, cgroups: o.Cgroups, admOff: o.AdmissionOff,
		emit: o.Emit, findWorld: o.FindWorld, lockWorld: o.LockWorld,
		worldLock: o.WorldLock, repoLock: o.RepoLock, admit: o.Admit,
		released: o.Released, beforeStop: o.BeforeStop,
		refreshRoutes: o.RefreshRoutes, refreshRoutesAsync: o.RefreshRoutesAsync,
		urlFor: o.URLFor, hostOf: o.HostOf,
	}
	e.sup = supervisor.New(supervisor.Options{
		Logger:      o.Logger.Named("supervisor"),
		Store:       &supStore{d: e},
		OnEvent:     e.onSupervisorEvent,
		Cgroups:     o.Cgroups,
		HealthEvery: o.HealthEvery,
	})
	return e
}

// SetAdmission hands the engine the admission queue an up waits in and
// gives its place back to (unless Options.AdmissionOff).
func (d *Engine) SetAdmission(adm *admission.Controller) { d.adm = adm }

// LogDir is where a world's service logs live.
func (d *Engine) LogDir(project, worktree string) string { return d.logDir(project, worktree) }

func (d *Engine) logDir(project, worktree string) string {
	return filepath.Join(d.home, "logs", project, worktree)
}

// ownerLabel names this home in a slice's owner claim: its absolute path
// and, on Unix, the user.
func (d *Engine) ownerLabel() string {
	abs, err := filepath.Abs(d.home)
	if err != nil {
		abs = d.home
	}
	if uid := os.Getuid(); uid >= 0 { // -1 on Windows
		return abs + " uid " + strconv.Itoa(uid)
	}
	return abs
}
