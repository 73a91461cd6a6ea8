package proxy

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/certs"
	"github.com/binkyhq/binky/host/listeners"
)

// Default listen addresses. Port 80 (and 443) give URLs without a port;
// when they cannot be bound (taken, or no privilege) the proxy falls back to
// the documented ports 7355 (http) and 7356 (https), and URL then carries it.
const (
	DefaultAddr            = "127.0.0.1:80"
	DefaultFallbackAddr    = "127.0.0.1:7355"
	DefaultTLSAddr         = "127.0.0.1:443"
	DefaultTLSFallbackAddr = "127.0.0.1:7356"
	DefaultDashboardHost   = "binky.localhost"
)

// Options configure a Proxy. Only Logger is required.
type Options struct {
	Logger hclog.Logger
	// Addr is the http listen address; DefaultAddr when empty.
	Addr string
	// FallbackAddr is tried when Addr cannot be bound; DefaultFallbackAddr
	// when empty, "none" to fail instead.
	FallbackAddr string
	// Certs enables HTTPS when non-nil. A TLS listener that cannot be bound
	// is logged once and http goes on alone.
	Certs *certs.Manager
	// TLSAddr and TLSFallbackAddr are as Addr and FallbackAddr for https.
	TLSAddr, TLSFallbackAddr string
	// Dashboard serves DashboardHost; nil serves the route list there.
	Dashboard http.Handler
	// DashboardHost is DefaultDashboardHost when empty.
	DashboardHost string
	// Waker, when set, wakes a suspended (or wake = true, down) world on a
	// request for it (wake.go); WakeTimeout bounds how long a non-browser
	// request waits, DefaultWakeTimeout when 0.
	Waker       Waker
	WakeTimeout time.Duration
	// Holder names who holds a listen address the proxy could not bind
	// ("binky home 3f2a… (/home/ann/.binky), pid 812"), for the log and
	// Note; nil or "" leaves the bind error as the reason.
	Holder func(addr string) string
	// Peer tells who is at the client end of a connection to the proxy
	// (client: the address it connects from; server: the proxy's address
	// it reached). The pages the proxy writes itself are shown only when
	// the answer is Mine (owner.go); an error wrapping
	// errors.ErrUnsupported (the platform cannot tell) shows them to a
	// loopback client, any other error refuses. Nil is listeners.PeerOf,
	// the real one; tests may pass another.
	Peer func(client, server netip.AddrPort) (listeners.Peer, error)
	// Browser takes what the pages of routes with BrowserLogs report
	// (browser.go); nil drops it.
	Browser BrowserSink
}

// Proxy routes requests by Host to local backends.
type Proxy struct {
	log       hclog.Logger
	stdlog    *log.Logger
	opts      Options
	dashHost  string
	dialer    *net.Dialer
	transport *http.Transport
	buffers   *bufferPool
	table     atomic.Pointer[table]
	writeMu   sync.Mutex // serialises table writers

	lastRequest atomic.Int64  // unix nanoseconds, updated at most once per touchEvery per route
	served      atomic.Uint64 // routed requests since start
	clock       coarseClock   // when a route's last connection closed (liveConns)

	mu       sync.Mutex
	started  bool
	closed   bool
	cancel   context.CancelFunc
	servers  []*http.Server
	raw      []net.Listener // plain-HTTP listeners the front accepts on
	fronts   frontConns     // connections the front is serving
	wg       sync.WaitGroup
	port     atomic.Int32
	note     string // why the http listener is not on Addr; set once by Start
	tlsPort  atomic.Int32
	tlsReady atomic.Bool
	self     atomic.Pointer[[]netip.AddrPort] // the listeners' addresses, which no route may reach (refuseSelf)
	wakes    wakes

	browserNotes sync.Map // route host and reason: a page left without the script, said once
}

// New builds a proxy; it listens only once Start is called.
func New(opts Options) *Proxy {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.FallbackAddr == "" {
		opts.FallbackAddr = DefaultFallbackAddr
	}
	if opts.TLSAddr == "" {
		opts.TLSAddr = DefaultTLSAddr
	}
	if opts.TLSFallbackAddr == "" {
		opts.TLSFallbackAddr = DefaultTLSFallbackAddr
	}
	if opts.Peer == nil {
		opts.Peer = listeners.PeerOf
	}
	if opts.DashboardHost == "" {
		opts.DashboardHost = DefaultDashboardHost
	}
	dash, _ := normalizeHost(opts.DashboardHost)
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	p := &Proxy{
		log:       opts.Logger,
		stdlog:    opts.Logger.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		opts:      opts,
		dashHost:  dash,
		dialer:    dialer,
		transport: newTransport(dialer),
		buffers:   newBufferPool(),
	}
	dialer.ControlContext = p.refuseSelf
	p.table.Store(&table{hosts: map[string]*entry{}})
	p.clock.set(time.Now())
	return p
}

// Port is the bound http port (0 before Start).
func (p *Proxy) Port() int { return int(p.port.Load()) }

// TLSPort is the bound https port, 0 when https is not being served.
func (p *Proxy) TLSPort() int {
	if !p.tlsReady.Load() {
		return 0
	}
	return int(p.tlsPort.Load())
}

// URL is the http address of host through the proxy: http://host, with
// :port when the proxy is not on port 80.
func (p *Proxy) URL(host string) string {
	return hostURL("http", host, p.Port(), 80)
}

// SecureURL is the https address of host, or "" when https is not served.
func (p *Proxy) SecureURL(host string) string {
	port := p.TLSPort()
	if port == 0 {
		return ""
	}
	return hostURL("https", host, port, 443)
}

func hostURL(scheme, host string, port, def int) string {
	if port == def || port == 0 {
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + strconv.Itoa(port)
}

// ServeHTTP applies the host policy and forwards to the route's backend.
// The dashboard and the route list answer only the home's own user
// (owner.go).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, ok := normalizeHost(r.Host)
	if !ok || !p.serves(host) {
		p.writeMisdirected(w, r)
		return
	}
	if host == p.dashHost {
		if !p.ownerOnly(w, r) {
			return
		}
		if p.opts.Dashboard != nil {
			p.opts.Dashboard.ServeHTTP(w, r)
			return
		}
		p.writeRouteList(w, r, http.StatusOK)
		return
	}
	e := p.table.Load().hosts[host]
	if e == nil {
		if !p.ownerOnly(w, r) {
			return
		}
		p.writeRouteList(w, r, http.StatusNotFound)
		return
	}
	if e.route.BrowserLogs && r.URL.Path == BrowserEndpoint {
		p.serveBrowserPost(w, r, e.route)
		return
	}
	p.served.Add(1)
	p.touchEntry(e)
	e.live.begin()
	defer e.live.end()
	if e.route.State != StateRunning {
		if p.wake(w, r, host, e.route) {
			return
		}
		p.writeUnavailable(w, r, e.route, string(e.route.State))
		return
	}
	if e.route.BrowserLogs && isNavigation(r) {
		p.serveInjected(e, w, r)
		return
	}
	e.forward.serve(p, w, r)
}

// touchEvery is how often, at most, a busy route's world is touched: idle
// suspension counts in minutes, and Touch takes the admission lock.
const touchEvery = time.Second

// touchEntry notes a request to e's world and tells the waker about it, at
// most once per touchEvery.
func (p *Proxy) touchEntry(e *entry) {
	now := time.Now().UnixNano()
	last := e.touched.Load()
	if now-last < int64(touchEvery) || !e.touched.CompareAndSwap(last, now) {
		return
	}
	p.lastRequest.Store(now)
	if p.opts.Waker != nil {
		p.touch(e.route)
	}
}

// Served is how many requests were routed to a world since the proxy
// started.
func (p *Proxy) Served() uint64 { return p.served.Load() }

// LastRequest is when a routed request was last seen, to within touchEvery;
// zero before the first.
func (p *Proxy) LastRequest() time.Time {
	if n := p.lastRequest.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Start binds the listeners and serves in the background until ctx ends or
// Close is called. It fails only when no http address can be bound; https
// trouble is logged once and http goes on.
func (p *Proxy) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return errors.New("start proxy: already started or closed")
	}
	ln, note, err := listen(p.opts.Addr, p.opts.FallbackAddr, p.opts.Holder)
	if err != nil {
		return err
	}
	if note != "" {
		p.note = note + "; listening on " + ln.Addr().String()
		p.log.Warn("proxy not on its usual address; URLs carry its port", "addr", ln.Addr().String(), "why", note)
	}
	p.started = true
	p.port.Store(int32(listenerPort(ln)))
	p.addSelf(ln)
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	go p.sweepIdle(base)
	go p.clock.run(base)
	p.serveFront(base, ln)
	for _, extra := range loopbackV6(ln) {
		p.addSelf(extra)
		p.serveFront(base, extra)
	}
	if p.opts.Certs != nil {
		p.startTLS(base)
	}
	p.log.Info("proxy started", "url", p.URL(p.dashHost), "https", p.SecureURL(p.dashHost))
	go func() {
		select {
		case <-ctx.Done():
			p.Close()
		case <-base.Done():
		}
	}()
	return nil
}

// DashboardHost is the name the dashboard answers on.
func (p *Proxy) DashboardHost() string { return p.dashHost }

// Note says why the proxy does not listen on its configured address (held
// by another binky home's proxy, or by another program), and where it
// listens instead; "" when it is where it was asked to be.
func (p *Proxy) Note() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.note
}

// newServer is the http.Server for one listener. There is no write timeout:
// streams and WebSockets stay open as long as both ends want.
func (p *Proxy) newServer(base context.Context) *http.Server {
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          p.stdlog,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       connContext,
	}
	p.servers = append(p.servers, srv)
	return srv
}

// serveFront runs the front (front.go) on a plain-HTTP listener, with an
// http server for what it hands off; callers hold p.mu.
func (p *Proxy) serveFront(base context.Context, ln net.Listener) {
	h := newHandoff(ln.Addr())
	p.raw = append(p.raw, ln)
	p.serve(base, h)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.acceptFront(ln, h, base.Done())
	}()
}

// serve runs an http server on ln; callers hold p.mu.
func (p *Proxy) serve(base context.Context, ln net.Listener) {
	srv := p.newServer(base)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("proxy listener stopped", "addr", ln.Addr().String(), "error", err)
		}
	}()
}

// Close stops the listeners, ends open connections (WebSockets included) and
// waits for the servers to return. It is safe to call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed || !p.started {
		p.closed = true
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cancel()
	servers, raw := p.servers, p.raw
	p.mu.Unlock()
	for _, ln := range raw {
		_ = ln.Close()
	}
	p.fronts.closeAll()
	for _, s := range servers {
		_ = s.Close()
	}
	p.wg.Wait()
	p.transport.CloseIdleConnections()
	for _, e := range p.table.Load().hosts {
		e.forward.pool.sweep(time.Time{})
	}
	p.tlsReady.Store(false)
}
