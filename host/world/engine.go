package world

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
)

// Engine runs the lifecycle of worlds: plan and apply an up, stop, remove,
// reset, restart and golden templates. The daemon builds one (New) and
// hands it what stays its own — the event log and routes — as the small
// interfaces of surface.go, and admission's controller (StartAdmission). The engine keeps its supervisor: the
// daemon reaches the processes through the engine's methods (Suspend,
// Resume, WakeStart, ServiceState, Shutdown).
type Engine struct {
	browser browserlog.Store // the worlds' browser logs (browser.go)
	home    string
	homeID  string
	log     hclog.Logger
	redact  *redact.Redactor
	reg     *registry.Registry
	ports   *ports.Allocator
	adapter Adapters
	sup     *supervisor.Supervisor
	cgroups *supervisor.Cgroups
	adm     *admission.Controller // nil: every world admitted at once
	admOff  bool
	bounds  *admission.Bounds  // the machine's (binky reserve)
	queue   *admission.Journal // the worlds waiting in the queue, recorded

	// The daemon's side (surface.go).
	events Events
	routes Routes

	worlds KeyedLocks[Lock] // project/worktree → serializes ops on one world
	repos  KeyedLocks[Lock] // repository root → serializes git worktree changes

	// unfailed holds the ids of worlds Reconcile found mid-up but could
	// not mark failed (the registry took no writes); RecordLive retries.
	unfailedMu sync.Mutex
	unfailed   []int64

	goldens   KeyedLocks[sync.Mutex] // golden template name → builds a template once
	dataMoves KeyedLocks[sync.Mutex] // adapter alias → its data directory moved once at a time
	verifies  KeyedLocks[sync.Mutex] // project/worktree → one verify of a world at a time

	cost costs // what each world costs: readings kept between statuses (cost.go)

	woken wokenSet // the idle timers of woken wake services (wakeservice.go)

	user string // the home owner's user name: {user} in hostname templates
}

// Options is what an Engine is built from. Every field is required except
// Cgroups (nil: processes tracked by group and marker only), HealthEvery
// and the daemon's side, Events and Routes (nil: the no-ops). The
// admission queue comes later (StartAdmission, admission.go): it is
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

	// The daemon's side; nil is the no-op (NoEvents, NoRoutes).
	Events Events
	Routes Routes
}

// New builds the engine and the supervisor its services run under.
func New(o Options) *Engine {
	e := &Engine{
		home: o.Home, homeID: o.HomeID, log: o.Logger, redact: o.Redact,
		reg: o.Registry, ports: o.Ports, adapter: o.Adapters, cgroups: o.Cgroups, admOff: o.AdmissionOff,
		events: o.Events, routes: o.Routes, user: userName(),
	}
	if e.events == nil {
		e.events = NoEvents{}
	}
	if e.routes == nil {
		e.routes = NoRoutes{}
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

// LogDir is where a world's service logs live.
func (e *Engine) LogDir(project, worktree string) string { return e.logDir(project, worktree) }

func (e *Engine) logDir(project, worktree string) string {
	return filepath.Join(e.home, "logs", project, worktree)
}

// ownerLabel names this home in a slice's owner claim: its absolute path
// and, on Unix, the user.
func (e *Engine) ownerLabel() string {
	abs, err := filepath.Abs(e.home)
	if err != nil {
		abs = e.home
	}
	if uid := os.Getuid(); uid >= 0 { // -1 on Windows
		return abs + " uid " + strconv.Itoa(uid)
	}
	return abs
}
