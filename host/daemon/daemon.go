package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/degraded"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/memtrim"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/tunnel"
	"github.com/binkyhq/binky/host/world"
)

// Options configure a daemon.
type Options struct {
	Home    string
	Version string
	// Logger receives the daemon's own log (stderr, which the CLI points at
	// $BINKY_HOME/daemon.log); nil means stderr.
	Logger hclog.Logger
	// ProxyAddr overrides the proxy listener ("127.0.0.1:80" by default, with
	// a fallback port). "off" disables the proxy.
	ProxyAddr string
	// ProxyTLSAddr overrides the https listener ("127.0.0.1:443" by
	// default, with a fallback port).
	ProxyTLSAddr string
	// TrimAfter is how long the daemon waits, quiet (no call in flight, no
	// proxied request), before it hands back memory it no longer uses
	// (host/memtrim). 0 means DefaultTrimAfter; negative never trims.
	TrimAfter time.Duration

	// Tuning knobs and test switches. cmd/binkyd reads each from the
	// variable named (and documents it); nothing below it reads the
	// environment for them.

	// HealthEvery is how often a running service's probe repeats
	// (BINKY_HEALTH_EVERY); 0 is the supervisor's default.
	HealthEvery time.Duration
	// NoCgroups tracks world processes by process group and marker only,
	// never by cgroup (BINKY_NO_CGROUPS).
	NoCgroups bool
	// PressureFile is a JSON file admission reads its pressure from
	// instead of /proc and statfs (BINKY_TEST_PRESSURE; docs/admission.md,
	// "Testing"); "" reads the machine.
	PressureFile string
	// PressureInterval is admission's sampling interval, and the gap
	// between two pressure moves (BINKY_TEST_PRESSURE_INTERVAL); 0 is
	// admission's default.
	PressureInterval time.Duration
	// AdmissionOff skips admission in up (BINKY_TEST_ADMISSION=off): the
	// benchmark's baseline.
	AdmissionOff bool
}

// DefaultTrimAfter is how long a quiet daemon waits before it trims.
const DefaultTrimAfter = 20 * time.Second

// Daemon is one BINKY_HOME's daemon.
type Daemon struct {
	opts      Options
	home      string
	homeID    string // registry.HomeID: in process markers, port leases and slice claims
	log       hclog.Logger
	redact    *redact.Redactor
	events    atomic.Pointer[events.Log] // nil while a degraded start could not open events.log
	reg       *registry.Registry
	deg       *degraded.Mode // the home takes no new data (host/degraded)
	ports     *ports.Allocator
	adapter   *adapter.Host
	cgroups   *supervisor.Cgroups // nil: processes tracked by group and marker only
	proxy     *proxy.Proxy
	tunnels   *tunnel.Manager       // other hosts' worlds reached from here (tunnels.go)
	adm       *admission.Controller // the admission queue (admission.go)
	routeKick chan struct{}
	started   time.Time
	idle      *memtrim.Idle // nil: never trims

	handlers map[string]handler
	stop     context.CancelFunc

	w *world.Engine // a world's lifecycle (host/world)
}

// New builds a daemon; Run starts it.
func New(opts Options) *Daemon {
	red := redact.New()
	log := opts.Logger
	if log == nil {
		// daemon.log: every entry redacted as it is written.
		log = hclog.New(&hclog.LoggerOptions{Name: "binkyd", Output: red.Entries(os.Stderr), Level: hclog.Info})
	}
	d := &Daemon{
		opts:      opts,
		home:      opts.Home,
		log:       log,
		redact:    red,
		routeKick: make(chan struct{}, 1),
	}
	// A verb that writes is refused while the home takes no new data
	// (degraded.go); ping, stop, status and env only read.
	d.handlers = map[string]handler{
		api.OpPing:    d.opPing,
		api.OpStop:    d.opStop,
		api.OpUp:      d.writing(op(d, (*world.Engine).Up), nil),
		api.OpDown:    d.writing(op(d, (*world.Engine).Down), nil),
		api.OpRemove:  d.writing(op(d, (*world.Engine).Remove), nil),
		api.OpStatus:  d.opStatus,
		api.OpEnv:     d.opEnv,
		api.OpVerify:  d.writing(op(d, (*world.Engine).Verify), nil),
		api.OpReset:   d.writing(op(d, (*world.Engine).Reset), nil),
		api.OpRestart: d.writing(op(d, (*world.Engine).Restart), nil),
		api.OpGolden:  d.writing(op(d, (*world.Engine).Golden), goldenWrites),
		api.OpReserve: d.writing(op(d, (*world.Engine).Reserve), reserveWrites),
		api.OpRun:     d.writing(op(d, (*world.Engine).Run), nil),

		// binky stop and start: one service of a world.
		api.OpStopService:  d.writing(op(d, (*world.Engine).StopServices), nil),
		api.OpStartService: d.writing(op(d, (*world.Engine).StartServices), nil),

		// Another host's worlds, reached from here (tunnels.go).
		api.OpAttach: d.opAttach,
	}
	return d
}

// op serves one of the engine's typed operations: it decodes the call's
// arguments and calls f on the engine, which Run builds after the handler
// table. Every engine op goes through it; none decodes its own.
func op[A, R any](d *Daemon, f func(*world.Engine, context.Context, A, world.Progress) (R, error)) handler {
	return func(ctx context.Context, raw json.RawMessage, s *stream) (any, error) {
		var a A
		if err := api.Decode(raw, &a); err != nil {
			return nil, err
		}
		r, err := f(d.w, ctx, a, s)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// Run serves until ctx ends or a stop op arrives. Worlds keep running after
// it returns.
func (d *Daemon) Run(ctx context.Context) error {
	if err := os.MkdirAll(d.home, 0o700); err != nil {
		return fmt.Errorf("create BINKY_HOME %s: %w", d.home, err)
	}
	lock, err := lockFile(filepath.Join(d.home, "daemon.pid"))
	if err != nil {
		return err
	}
	defer lock.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.stop = cancel
	d.started = time.Now()

	// On a home that takes no new data the registry opens read-only and
	// the daemon runs degraded (host/degraded): it still re-adopts and
	// supervises its worlds, and skips the writes below until there is
	// room.
	if d.reg, err = registry.Open(ctx, filepath.Join(d.home, "binky.db")); err != nil {
		return err
	}
	defer d.reg.Close()
	d.deg = degraded.New(d.home, d.reg, (*startFinisher)(d), d.log)
	d.deg.Start()
	if err := d.recordHomeID(ctx); err != nil {
		return err
	}
	if err := d.openEvents(); err != nil {
		return err
	}
	defer func() {
		if l := d.events.Load(); l != nil {
			l.Close()
		}
	}()
	if err := d.openPorts(ctx); err != nil {
		return err
	}
	d.newEngine()
	defer d.w.Shutdown()

	d.startTunnels(ctx)
	d.startProxy(ctx)
	go d.routeLoop(ctx)
	d.w.Reconcile(ctx)
	d.startAdmission(ctx)
	d.startTrim(ctx)
	go d.deg.Run(ctx)

	return d.serveAPI(ctx)
}

// recordHomeID reads the home's id from the registry and writes it to
// home.id; a degraded home runs without the file.
func (d *Daemon) recordHomeID(ctx context.Context) error {
	var err error
	if d.homeID, err = d.reg.HomeID(ctx); err != nil {
		return err
	}
	return d.deg.HomeID(d.homeID)
}

// openEvents opens events.log; a degraded home runs without it.
func (d *Daemon) openEvents() error {
	if l, err := events.Open(filepath.Join(d.home, "events.log"), d.redact); err == nil {
		d.events.Store(l)
	} else if !d.deg.Tolerate("open the event log", err) {
		return err
	}
	return nil
}

// openPorts opens the port allocator on the machine-wide leases. Port
// blocks are leased machine-wide, so no other home on this machine
// (another of this user's, or another user's) is handed a block this home
// keeps. Nothing here waits for the store: it is synced in the background
// (leases.go), and the daemon serves and re-adopts its worlds while the
// store is refused or busy.
func (d *Daemon) openPorts(ctx context.Context) error {
	leases, err := ports.OpenLeases(ports.DefaultLeaseDir(), ports.LeaseOptions{})
	if err != nil {
		return fmt.Errorf("open the machine-wide port leases: %w (BINKY_PORT_LEASES names another directory)", err)
	}
	if d.ports, err = ports.New(d.reg, ports.Options{Leases: leases, HomeID: d.homeID, HomeDir: d.home}); err != nil {
		return err
	}
	go d.syncLeases(ctx)
	return nil
}

// newEngine builds the adapter host, the cgroups and the world engine
// wired to them and to the daemon's implementations of its interfaces.
func (d *Daemon) newEngine() {
	d.adapter = adapter.New(adapter.Options{
		Home:   d.home,
		Logger: d.log.Named("adapter"),
		Redact: d.redact.String,
		OnStderr: func(name, call, text string) {
			d.emit(events.Event{Event: events.AdapterStderr, Adapter: name, Error: call + ": " + text})
		},
	})
	d.cgroups = d.openCgroups()
	d.w = world.New(world.Options{
		Home: d.home, HomeID: d.homeID, Logger: d.log, Redact: d.redact,
		Registry: d.reg, Ports: d.ports, Adapters: world.HostAdapters(d.adapter), Cgroups: d.cgroups,
		HealthEvery: d.opts.HealthEvery, AdmissionOff: d.opts.AdmissionOff,
		Events: (*engineEvents)(d), Routes: (*engineRoutes)(d),
	})
}

// serveAPI listens on the API socket and serves it until ctx ends, then
// stops the proxy.
func (d *Daemon) serveAPI(ctx context.Context) error {
	sock := api.Socket(d.home)
	ln, err := d.listenAPI(sock)
	if err != nil {
		return err
	}
	d.emit(events.Event{Event: events.DaemonStarted})
	d.log.Info("daemon started", "pid", os.Getpid(), "home", d.home, "version", d.opts.Version)
	var serving sync.WaitGroup
	serveOn := func(l net.Listener) {
		serving.Add(1)
		go func() {
			defer serving.Done()
			d.serve(ctx, l)
		}()
	}
	serveOn(ln)
	d.holdAPI(ctx, sock, ln, serveOn) // until ctx ends
	serving.Wait()
	os.Remove(sock)
	d.stopTunnels()
	d.stopProxy()
	d.emit(events.Event{Event: events.DaemonStopped})
	d.log.Info("daemon stopped; worlds keep running")
	return nil
}

// startTrim hands back memory once the daemon has been quiet for
// TrimAfter (host/memtrim), pacing the heap while the proxy is busy.
func (d *Daemon) startTrim(ctx context.Context) {
	after := d.opts.TrimAfter
	if after == 0 {
		after = DefaultTrimAfter
	}
	var busy memtrim.Busy
	if d.proxy != nil {
		busy = d.proxy
	}
	d.idle = memtrim.Start(ctx.Done(), after, busy, d.log)
}

// emit writes an event; a failure to log is logged, never fatal. A
// degraded daemon, whose home takes no new data, drops events silently.
func (d *Daemon) emit(e events.Event) {
	l := d.events.Load()
	if l == nil {
		return
	}
	if err := l.Emit(e); err != nil {
		if why, _ := d.deg.Degraded(); why == nil {
			d.log.Warn("write event", "event", e.Event, "error", err)
		}
	}
}

func (d *Daemon) opPing(ctx context.Context, _ json.RawMessage, _ *stream) (any, error) {
	return api.PingResult{Pid: os.Getpid(), Version: d.opts.Version, Home: d.home, Started: d.started, ProxyPort: d.proxyPort(), TLSPort: d.proxyTLSPort()}, nil
}

func (d *Daemon) opStop(ctx context.Context, _ json.RawMessage, _ *stream) (any, error) {
	go func() {
		time.Sleep(20 * time.Millisecond) // let the reply reach the caller
		d.stop()
	}()
	return struct{}{}, nil
}

// openCgroups opens the cgroups that track each world's processes, named
// for this BINKY_HOME, or returns nil (and logs why) where the machine has
// no writable cgroup v2.
func (d *Daemon) openCgroups() *supervisor.Cgroups {
	if d.opts.NoCgroups {
		d.log.Info("world processes tracked by process group and marker (BINKY_NO_CGROUPS is set)")
		return nil
	}
	cg, err := supervisor.OpenCgroups("home-" + d.homeID)
	if err != nil {
		d.log.Info("world processes tracked by process group and marker", "why", err)
		return nil
	}
	d.log.Info("world processes tracked by cgroup v2", "root", cg.Root())
	return cg
}
