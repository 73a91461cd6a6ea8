package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// StateSuspended is a route whose world's processes are stopped
// (docs/admission.md); it is not forwarded, and a Waker can resume it.
const StateSuspended = "suspended"

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

// waking is one wake in flight; done is closed when it ends.
type waking struct {
	done chan struct{}
	err  error
}

// wakes holds the wakes in flight, one per world: a burst of requests to a
// sleeping world wakes it once.
type wakes struct {
	mu sync.Mutex
	m  map[string]*waking
}

// start returns the wake of project/worktree in flight, starting it with
// fn when there is none. The wake outlives the request that started it: a
// browser that reloads does not abort it.
func (ws *wakes) start(key string, fn func(context.Context) error) *waking {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*waking{}
	}
	if w := ws.m[key]; w != nil {
		return w
	}
	w := &waking{done: make(chan struct{})}
	ws.m[key] = w
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		w.err = fn(ctx)
		cancel()
		ws.mu.Lock()
		delete(ws.m, key)
		ws.mu.Unlock()
		close(w.done)
	}()
	return w
}

// touch tells the waker about a request to a route's world.
func (p *Proxy) touch(rt Route) {
	if wk := p.opts.Waker; wk != nil && rt.Worktree != "" {
		wk.Touch(rt.Project, rt.Worktree)
	}
}

// wake handles a request to a route that is not running when its world can
// be woken: a browser gets a page that says the world is starting and
// reloads itself; any other client waits (up to WakeTimeout) and is then
// served. It reports false when the world cannot be woken.
func (p *Proxy) wake(w http.ResponseWriter, r *http.Request, host string, rt Route) bool {
	wk := p.opts.Waker
	if wk == nil || rt.Worktree == "" || !wk.Wakeable(rt.Project, rt.Worktree) {
		return false
	}
	job := p.wakes.start(rt.Project+"/"+rt.Worktree, func(ctx context.Context) error {
		return wk.Wake(ctx, rt.Project, rt.Worktree)
	})
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		w.Header().Set("Retry-After", "1")
		p.render(w, http.StatusServiceUnavailable, "unavailable", pageData{
			Title: "starting " + rt.Worktree + "…", Dashboard: p.linkURL(r, p.dashHost),
			Refresh: 1, Route: rt, Why: "starting",
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
		p.writeUnavailable(w, r, rt, "still starting")
		return true
	case <-r.Context().Done():
		return true
	}
	if job.err != nil {
		p.writeUnavailable(w, r, rt, "not started: "+job.err.Error())
		return true
	}
	e := p.table.Load().hosts[host]
	if e == nil || e.route.State != StateRunning {
		p.writeUnavailable(w, r, rt, "starting")
		return true
	}
	e.forward.rp.ServeHTTP(w, r)
	return true
}
