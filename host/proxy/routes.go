package proxy

import (
	"cmp"
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
}

// entry is one route with the forwarder built for it.
type entry struct {
	route   Route
	forward *forwarder
	touched atomic.Int64 // unix nanoseconds of the last Waker.Touch
}

// table is immutable once published: writers build a new one.
type table struct {
	hosts  map[string]*entry
	sorted []Route
}

// Set replaces the whole route table atomically. Routes whose Host is not a
// valid .localhost name are dropped (and logged); a later duplicate Host wins.
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
		if oe := old.hosts[h]; oe != nil && oe.route.Target == r.Target {
			f = oe.forward
		} else {
			f = p.newForwarder(r.Target)
		}
		t.hosts[h] = &entry{route: r, forward: f}
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
	if !ok || !isLocalhost(h) || h == "localhost" || h == p.dashHost {
		p.log.Warn("route not added: its host must be a name under .localhost", "host", r.Host, "target", r.Target)
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
