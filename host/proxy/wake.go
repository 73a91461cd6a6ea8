package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultWakeTimeout is how long a non-browser request waits for a woken
// world before it gets the retrying page.
const DefaultWakeTimeout = 60 * time.Second

// Waker wakes the world behind a route that is not running: a suspended
// world, or a down one whose project sets wake = true. The daemon
// implements it; the proxy only asks.
type Waker interface {
	// Wakeable reports, quickly, whether a request should wake the world.
	Wakeable(project, worktree string) bool
	// Wake resumes or starts the world and returns once its routes run,
	// or when ctx ends.
	Wake(ctx context.Context, project, worktree string) error
	// Touch records a proxied request to the world (idle_suspend).
	Touch(project, worktree string)
}

// ServiceWaker is an optional part of a Waker: it starts one service of a
// running world, the one behind a route in StateWake, with what it
// depends on, and hears of requests to each route (its idle_suspend).
type ServiceWaker interface {
	// WakeService returns once the service runs, or when ctx ends.
	WakeService(ctx context.Context, project, worktree, service string) error
	TouchService(project, worktree, service string)
}

// WakeNoter is an optional part of a Waker: why a world the proxy is
// waking is not running, when that is more than "starting" (e.g.
// "suspended to relieve memory pressure; it resumes when …"). The pages a
// request gets while it waits say it.
type WakeNoter interface {
	WakeNote(project, worktree string) string
}

// waking is one wake in flight; done is closed when it ends.
type waking struct {
	done chan struct{}
	err  error

	mu      sync.Mutex
	waiting int           // clients waiting on it now
	seen    time.Time     // the last starting page served for it
	poke    chan struct{} // interest changed
}

// wakeGrace is how long a wake with no client waiting on it is kept after
// the last starting page (which reloads every second). A wake nobody
// waits for any more is abandoned at once: it leaves the admission queue
// instead of holding it (issue 29).
const wakeGrace = 3 * time.Second

// wakes holds the wakes in flight, one per world: a burst of requests to a
// sleeping world wakes it once.
type wakes struct {
	mu sync.Mutex
	m  map[string]*waking
	// failed is the last failed wake of each key, kept wakeGrace: a
	// browser's reload shows its reason before the next try.
	failed map[string]failedWake
}

type failedWake struct {
	err error
	at  time.Time
}

// recentFailure is the error of key's last wake when it failed less than
// wakeGrace ago and no other is in flight.
func (ws *wakes) recentFailure(key string) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	f, ok := ws.failed[key]
	if !ok || ws.m[key] != nil || time.Since(f.at) > wakeGrace {
		return nil
	}
	return f.err
}

// start returns the wake of project/worktree in flight, starting it with
// fn when there is none, and records the caller's interest: a browser's
// page keeps the wake for wakeGrace (it reloads), a waiting client until
// it calls the returned release. The wake outlives the request that
// started it, but not the interest of every client: once none is left,
// fn's ctx ends.
func (ws *wakes) start(key string, browser bool, fn func(context.Context) error) (*waking, func()) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*waking{}
	}
	w := ws.m[key]
	if w == nil {
		w = &waking{done: make(chan struct{}), poke: make(chan struct{}, 1)}
		ws.m[key] = w
		defer func() {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				go w.watch(ctx, cancel)
				w.err = fn(ctx)
				cancel()
				ws.mu.Lock()
				delete(ws.m, key)
				if w.err != nil {
					if ws.failed == nil {
						ws.failed = map[string]failedWake{}
					}
					ws.failed[key] = failedWake{err: w.err, at: time.Now()}
				} else {
					delete(ws.failed, key)
				}
				ws.mu.Unlock()
				close(w.done)
			}()
		}()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if browser {
		w.seen = time.Now()
		w.signal()
		return w, func() {}
	}
	w.waiting++
	var once sync.Once
	return w, func() {
		once.Do(func() {
			w.mu.Lock()
			w.waiting--
			w.signal()
			w.mu.Unlock()
		})
	}
}

// has reports whether a wake of key is in flight.
func (ws *wakes) has(key string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.m[key] != nil
}

func (w *waking) signal() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// watch ends the wake (cancel) once no client waits on it and no starting
// page was served for wakeGrace.
func (w *waking) watch(ctx context.Context, cancel func()) {
	for {
		w.mu.Lock()
		idle, left := w.waiting == 0, wakeGrace-time.Since(w.seen)
		w.mu.Unlock()
		if idle && left <= 0 {
			cancel()
			return
		}
		var expire <-chan time.Time
		var t *time.Timer
		if idle {
			t = time.NewTimer(left)
			expire = t.C
		}
		select {
		case <-ctx.Done():
		case <-w.poke:
		case <-expire:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// touch tells the waker about a request to a route's world.
func (p *Proxy) touch(rt Route) {
	if wk := p.opts.Waker; wk != nil && rt.Worktree != "" && rt.Remote == "" {
		wk.Touch(rt.Project, rt.Worktree)
		if sw, ok := wk.(ServiceWaker); ok && rt.Service != "" {
			sw.TouchService(rt.Project, rt.Worktree, rt.Service)
		}
	}
}

// wake handles a request to a route that is not running when its world can
// be woken: a browser gets a page that says the world is starting and
// reloads itself; any other client waits (up to WakeTimeout) and is then
// served. It reports false when the world cannot be woken.
func (p *Proxy) wake(w http.ResponseWriter, r *http.Request, host string, rt Route) bool {
	return p.wakeAs(w, r, host, rt, true)
}

// wakeAs is wake; again says a world woken may go on to wake the service
// behind the route (once).
func (p *Proxy) wakeAs(w http.ResponseWriter, r *http.Request, host string, rt Route, again bool) bool {
	wk := p.opts.Waker
	if wk == nil || rt.Worktree == "" || rt.Remote != "" {
		return false
	}
	key, what := rt.Project+"/"+rt.Worktree, rt.Worktree
	fn := func(ctx context.Context) error { return wk.Wake(ctx, rt.Project, rt.Worktree) }
	sw, perService := wk.(ServiceWaker)
	svcWake := false
	switch {
	case perService && rt.Service != "" && (rt.State == StateWake || p.wakes.has(key+"/"+rt.Service)):
		// One service of a running world: a burst of first requests
		// starts it once; one that comes while it starts (its route
		// says starting) waits with them.
		key, what, svcWake = key+"/"+rt.Service, rt.Service+"."+rt.Worktree, true
		fn = func(ctx context.Context) error { return sw.WakeService(ctx, rt.Project, rt.Worktree, rt.Service) }
	case rt.State == StateWake || !wk.Wakeable(rt.Project, rt.Worktree):
		return false
	}
	browser := strings.Contains(r.Header.Get("Accept"), "text/html")
	if err := p.wakes.recentFailure(key); browser && err != nil && svcWake {
		// The reason of the start that just failed, before the next try.
		p.writeUnavailable(w, r, rt, "not started: "+err.Error())
		return true
	}
	job, release := p.wakes.start(key, browser, fn)
	defer release()
	note := ""
	if n, ok := wk.(WakeNoter); ok && !svcWake {
		note = n.WakeNote(rt.Project, rt.Worktree)
	}
	if browser && !p.isOwner(r) {
		writePlainRetry(w, http.StatusServiceUnavailable, 1)
		return true
	}
	if browser {
		title, why := "starting "+what+"…", string(StateStarting)
		if note != "" {
			title, why = rt.Worktree+" is "+note, note
		}
		w.Header().Set("Retry-After", "1")
		p.render(w, http.StatusServiceUnavailable, "unavailable", pageData{
			Title: title, Dashboard: p.linkURL(r, p.dashHost),
			Refresh: 1, Route: rt, Why: why,
		})
		return true
	}
	timeout := p.opts.WakeTimeout
	if timeout <= 0 {
		timeout = DefaultWakeTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-job.done:
	case <-t.C:
		p.writeUnavailable(w, r, rt, cmpOr(note, "still starting"))
		return true
	case <-r.Context().Done():
		return true
	}
	if job.err != nil {
		p.writeUnavailable(w, r, rt, "not started: "+job.err.Error())
		return true
	}
	e := p.table.Load().hosts[host]
	if e != nil && e.route.State == StateWake && again {
		// The world woke; the service behind the route waits for its
		// request: this one.
		return p.wakeAs(w, r, host, e.route, false)
	}
	if e == nil || e.route.State != StateRunning {
		p.writeUnavailable(w, r, rt, string(StateStarting))
		return true
	}
	// A page load goes the way it would have gone to a running route:
	// with the browser-log script when the route keeps browser logs.
	if e.route.BrowserLogs && isNavigation(r) {
		p.serveInjected(e, w, r)
		return true
	}
	e.forward.rp.ServeHTTP(w, r)
	return true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
