package proxy

import (
	"cmp"
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// RouteState is what a request to a route meets: the daemon reduces the
// service's state and its world's (host/state) to one of these. Only
// StateRunning is forwarded; every other state gets the retrying
// "unavailable" page, which names it.
type RouteState string

// Route states.
const (
	StateRunning    RouteState = "running"    // the service runs: forwarded
	StateStarting   RouteState = "starting"   // its process has not passed its probe yet
	StateRestarting RouteState = "restarting" // in backoff, or unhealthy
	StateDown       RouteState = "down"       // no process (stopped, exited, or unknown to the supervisor)
	StateFailed     RouteState = "failed"     // failed or lost: nothing restarts it
	// StateSuspended is a route whose world's processes are stopped
	// (docs/admission.md); it is not forwarded, and a Waker can resume it.
	StateSuspended RouteState = "suspended"
	// StateWake is a service that starts on its first request (wake =
	// true) and does not run: a request asks the ServiceWaker to start it
	// and waits (wake.go).
	StateWake RouteState = "wake"
	// StateReconnecting is a route to another machine's world whose road
	// (the SSH connection that carries it) is down and being made again:
	// not forwarded, and the page says which host it waits for.
	StateReconnecting RouteState = "reconnecting"
)

// Route maps one hostname to one backend.
type Route struct {
	// Host is the full name, e.g. "web.feat-a.acme.localhost".
	Host string
	// Target is the backend's host:port, e.g. "127.0.0.1:4101".
	Target string
	// State is what a request meets (StateRunning …).
	State RouteState
	// Project, Worktree and Service name the route on the pages.
	Project, Worktree, Service string
	// BrowserLogs puts the browser log script into the service's pages
	// and takes their posts (browser.go).
	BrowserLogs bool
	// Remote names the host (of hosts.toml) whose world this is, reached
	// through a local forward at Target; "" for this machine's worlds.
	// A remote route is never woken or touched here: its world's own
	// daemon does that.
	Remote string
}

// entry is one route with the forwarder built for it.
type entry struct {
	route   Route
	forward *forwarder
	touched atomic.Int64 // unix nanoseconds of the last Waker.Touch
	live    *liveConns   // kept across tables while the route names the same service
}

// liveConns counts a route's connections open now: requests in flight,
// streams (server-sent events, long polls) and upgraded connections
// (WebSockets) until they close. The idle checks (Activity) do not stop a
// service or world while any is open, and count its idle time from when
// the last one closed.
type liveConns struct {
	open  atomic.Int64
	ended atomic.Int64 // unix nanoseconds the count last fell to zero (coarse)
	clock *coarseClock
}

func (l *liveConns) begin() { l.open.Add(1) }

func (l *liveConns) end() {
	if l.open.Add(-1) == 0 {
		l.ended.Store(l.clock.now())
	}
}

// coarseClock is the time to within coarseTick, read without a clock
// call: a connection's end is on every request's path, and time.Now costs
// over 100 ns on some virtual machines (as much as the rest of the
// counting ten times over).
type coarseClock struct{ ns atomic.Int64 }

// coarseTick is how often the coarse clock moves; idle_suspend counts in
// seconds at the least, and requests touch a world at most once a second
// (touchEvery).
const coarseTick = time.Second

func (c *coarseClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// now is the last tick plus one: not before the time while the ticks
// keep time, so an idle time counted from it is not cut short.
func (c *coarseClock) now() int64 { return c.ns.Load() + int64(coarseTick) }

// run moves the clock every coarseTick until ctx ends.
func (c *coarseClock) run(ctx context.Context) {
	t := time.NewTicker(coarseTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.set(now)
		}
	}
}

// Activity reports the connections open now to the routes of the world
// project/worktree (only service's when service is not "") and when the
// last of them closed (zero when none closed since the routes were set).
// A connection counts from the start of its request to its end: a
// WebSocket or an event stream until it closes.
func (p *Proxy) Activity(project, worktree, service string) (open int, ended time.Time) {
	var last int64
	for _, e := range p.table.Load().hosts {
		r := &e.route
		if r.Project != project || r.Worktree != worktree || (service != "" && r.Service != service) {
			continue
		}
		open += int(e.live.open.Load())
		last = max(last, e.live.ended.Load())
	}
	if last != 0 {
		ended = time.Unix(0, last)
	}
	return open, ended
}

// table is immutable once published: writers build a new one.
type table struct {
	hosts  map[string]*entry
	sorted []Route
}

// Set replaces the whole route table atomically. Routes whose Host is not a
// name under .localhost, nor a DNS name of two labels or more under another
// apex (a project's apex = "test"), are dropped (and logged); a later duplicate Host wins.
func (p *Proxy) Set(routes []Route) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	m := make(map[string]Route, len(routes))
	for _, r := range routes {
		if r2, ok := p.cleanRoute(r); ok {
			m[r2.Host] = r2
		}
	}
	p.publish(m)
}

// Upsert adds or replaces the route for r.Host.
func (p *Proxy) Upsert(r Route) {
	r2, ok := p.cleanRoute(r)
	if !ok {
		return
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	m := p.current()
	m[r2.Host] = r2
	p.publish(m)
}

// Remove deletes the route for host, if there is one.
func (p *Proxy) Remove(host string) {
	h, ok := normalizeHost(host)
	if !ok {
		return
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	m := p.current()
	if _, ok := m[h]; !ok {
		return
	}
	delete(m, h)
	p.publish(m)
}

// Routes returns the live routes sorted by project, worktree, service, host.
func (p *Proxy) Routes() []Route {
	return slices.Clone(p.table.Load().sorted)
}

// Routed reports whether host is in the route table.
func (p *Proxy) Routed(host string) bool {
	h, ok := normalizeHost(host)
	if !ok {
		return false
	}
	_, ok = p.table.Load().hosts[h]
	return ok
}

// current copies the published routes into a map a writer may edit.
func (p *Proxy) current() map[string]Route {
	t := p.table.Load()
	m := make(map[string]Route, len(t.hosts)+1)
	for h, e := range t.hosts {
		m[h] = e.route
	}
	return m
}

// publish builds and stores a new table; callers hold writeMu. Forwarders
// are reused for routes whose target did not change.
func (p *Proxy) publish(m map[string]Route) {
	old := p.table.Load()
	t := &table{hosts: make(map[string]*entry, len(m)), sorted: make([]Route, 0, len(m))}
	for h, r := range m {
		var f *forwarder
		oe := old.hosts[h]
		if oe != nil && oe.route.Target == r.Target {
			f = oe.forward
		} else {
			f = p.newForwarder(r.Target)
		}
		live := &liveConns{clock: &p.clock}
		if oe != nil && oe.route.Project == r.Project && oe.route.Worktree == r.Worktree && oe.route.Service == r.Service {
			live = oe.live // its open connections end on the entry they began on
		}
		t.hosts[h] = &entry{route: r, forward: f, live: live}
		t.sorted = append(t.sorted, r)
	}
	for h, oe := range old.hosts {
		if ne := t.hosts[h]; ne == nil || ne.forward != oe.forward {
			oe.forward.pool.sweep(time.Time{}) // its target is gone
		}
	}
	slices.SortFunc(t.sorted, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), cmp.Compare(a.Worktree, b.Worktree),
			cmp.Compare(a.Service, b.Service), cmp.Compare(a.Host, b.Host))
	})
	p.table.Store(t)
}

// cleanRoute normalises r.Host and checks the route can be served.
func (p *Proxy) cleanRoute(r Route) (Route, bool) {
	h, ok := normalizeHost(r.Host)
	if !ok || !(isLocalhost(h) || isDNSName(h)) || h == "localhost" || h == p.dashHost {
		p.log.Warn("route not added: its host must be a name under .localhost or another apex", "host", r.Host, "target", r.Target)
		return r, false
	}
	if _, _, err := net.SplitHostPort(r.Target); err != nil {
		p.log.Warn("route not added: target is not host:port", "host", r.Host, "target", r.Target, "error", err)
		return r, false
	}
	r.Host = h
	return r, true
}

// normalizeHost turns a Host header (or SNI, or route name) into the bare
// lowercase hostname: port and one trailing dot removed. It reports false for
// an empty or malformed value.
func normalizeHost(hostport string) (string, bool) {
	h := hostport
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", false
		}
		rest := h[end+1:]
		if rest != "" && (rest[0] != ':' || !allDigits(rest[1:])) {
			return "", false
		}
		h = h[1:end]
		if _, err := netip.ParseAddr(h); err != nil {
			return "", false
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 {
		if strings.IndexByte(h[i+1:], ':') >= 0 || !allDigits(h[i+1:]) {
			return "", false
		}
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 || strings.HasSuffix(h, ".") {
		return "", false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || c == '/' || c == '\\' || c == '@' || c == '%' || c == '[' || c == ']' {
			return "", false
		}
	}
	return strings.ToLower(h), true
}

func allDigits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLocalhost reports whether a normalised name is localhost or under it.
func isLocalhost(h string) bool {
	return h == "localhost" || (strings.HasSuffix(h, ".localhost") && !strings.HasPrefix(h, ".") && !strings.Contains(h, ".."))
}

// isDNSName reports whether a normalised name is two or more lowercase
// LDH labels: a route's name under an apex other than localhost. Only
// routed names of that kind are served; any other is refused (421).
func isDNSName(h string) bool {
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// serves reports whether the proxy answers a normalised name: any name
// under .localhost (unknown ones get the route list), and a name under
// another apex only while it is routed.
func (p *Proxy) serves(h string) bool {
	return isLocalhost(h) || p.table.Load().hosts[h] != nil
}
