package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServiceWaker wakes one service by publishing its route as running;
// a whole-world wake publishes it waiting for its request (StateWake).
type fakeServiceWaker struct {
	p       *Proxy
	route   Route
	err     error         // what WakeService answers, when set
	release chan struct{} // WakeService waits for it when non-nil

	worldWakes, serviceWakes, touches atomic.Int32
}

func (f *fakeServiceWaker) Wakeable(project, worktree string) bool { return true }
func (f *fakeServiceWaker) Touch(project, worktree string)         {}
func (f *fakeServiceWaker) Wake(ctx context.Context, project, worktree string) error {
	f.worldWakes.Add(1)
	r := f.route
	r.State = StateWake
	f.p.Upsert(r)
	return nil
}

func (f *fakeServiceWaker) WakeService(ctx context.Context, project, worktree, service string) error {
	f.serviceWakes.Add(1)
	if f.release != nil {
		<-f.release
	}
	if f.err != nil {
		return f.err
	}
	r := f.route
	r.State = StateRunning
	f.p.Upsert(r)
	return nil
}

func (f *fakeServiceWaker) TouchService(project, worktree, service string) { f.touches.Add(1) }

var _ ServiceWaker = (*fakeServiceWaker)(nil)

func serviceWakeSetup(t *testing.T, state RouteState) (*Proxy, *fakeServiceWaker) {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) }))
	t.Cleanup(backend.Close)
	fw := &fakeServiceWaker{}
	p := startProxy(t, Options{Waker: fw, WakeTimeout: waitLimit})
	fw.p = p
	fw.route = Route{Host: "web.w1.acme.localhost", Target: strings.TrimPrefix(backend.URL, "http://"), State: state, Project: "acme", Worktree: "w1", Service: "web"}
	p.Set([]Route{fw.route})
	return p, fw
}

// TestServiceWakeStartsItOnceForConcurrentFirstRequests: requests that
// come together to a service waiting for its first request all wait for
// one start and are then served.
func TestServiceWakeStartsItOnceForConcurrentFirstRequests(t *testing.T) {
	p, fw := serviceWakeSetup(t, StateWake)
	fw.release = make(chan struct{})
	const n = 6
	var wg sync.WaitGroup
	bodies := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
			req.Host = "web.w1.acme.localhost"
			resp, err := (&http.Client{Timeout: waitLimit + 10*time.Second, Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			codes[i], bodies[i] = resp.StatusCode, string(b)
		}()
	}
	// Every request waits on the one start before it may end.
	deadline := time.Now().Add(waitLimit)
	for waiting(p, "acme/w1/web") < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests wait on the wake", waiting(p, "acme/w1/web"), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(fw.release)
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || bodies[i] != "served" {
			t.Errorf("request %d: got %d %.200q; want 200 served", i, codes[i], bodies[i])
		}
	}
	if got := fw.serviceWakes.Load(); got != 1 {
		t.Errorf("%d service wakes for %d requests; want 1", got, n)
	}
	if fw.worldWakes.Load() != 0 {
		t.Errorf("woke the world of a running world's service")
	}
	if fw.touches.Load() == 0 {
		t.Errorf("no request touched the service (its idle_suspend)")
	}
}

// waiting is how many clients wait on the wake of key now.
func waiting(p *Proxy, key string) int {
	p.wakes.mu.Lock()
	w := p.wakes.m[key]
	p.wakes.mu.Unlock()
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiting
}

// TestServiceWakeFailureShowsTheReason: a start that fails answers the
// waiting client with the error page naming why, and a browser's reload
// right after sees it too.
func TestServiceWakeFailureShowsTheReason(t *testing.T) {
	p, fw := serviceWakeSetup(t, StateWake)
	fw.err = errors.New("start web: exit status 3")
	resp, body := get(t, p, "web.w1.acme.localhost", "/")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "not started: start web: exit status 3") {
		t.Errorf("got %d %.300q; want 503 naming the failed start", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
	req.Host = "web.w1.acme.localhost"
	req.Header.Set("Accept", "text/html")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "not started: start web: exit status 3") {
		t.Errorf("browser after a failed start: got %d %.300q; want the reason", r2.StatusCode, b)
	}
}

// TestServiceWakeAfterWorldWake: a request to a suspended world's wake
// service wakes the world, then the service, and is served.
func TestServiceWakeAfterWorldWake(t *testing.T) {
	p, fw := serviceWakeSetup(t, StateSuspended)
	resp, body := get(t, p, "web.w1.acme.localhost", "/")
	if resp.StatusCode != 200 || body != "served" {
		t.Fatalf("got %d %q; want 200 served", resp.StatusCode, body)
	}
	if fw.worldWakes.Load() != 1 || fw.serviceWakes.Load() != 1 {
		t.Errorf("world wakes %d, service wakes %d; want one of each", fw.worldWakes.Load(), fw.serviceWakes.Load())
	}
}

// TestWakeRouteWithoutServiceWaker: a waker that cannot wake one service
// leaves the route's unavailable page.
func TestWakeRouteWithoutServiceWaker(t *testing.T) {
	p, fw := wakeSetup(t, true)
	r := fw.route
	r.State = StateWake
	p.Set([]Route{r})
	resp, body := get(t, p, "web.w1.acme.localhost", "/")
	if resp.StatusCode != http.StatusServiceUnavailable || fw.wakes.Load() != 0 {
		t.Errorf("got %d %.200q, %d wakes; want 503 and no wake", resp.StatusCode, body, fw.wakes.Load())
	}
}

// TestServiceWakeServesAPageWithTheBrowserScript: a page load that waited
// on the start of a service whose route keeps browser logs is served as
// one to a running route would be: with the script in it. A request that
// is not a page load comes as the service sent it.
func TestServiceWakeServesAPageWithTheBrowserScript(t *testing.T) {
	target, _ := pageBackend(t)
	fw := &fakeServiceWaker{}
	p := startProxy(t, Options{Waker: fw, WakeTimeout: waitLimit, Browser: &sinkRecorder{}})
	fw.p = p
	fw.route = Route{Host: "web.w1.acme.localhost", Target: target, State: StateWake, Project: "acme", Worktree: "w1", Service: "web", BrowserLogs: true}
	client := &http.Client{Timeout: waitLimit + 10*time.Second, Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
	get := func(dest string) string {
		t.Helper()
		p.Set([]Route{fw.route}) // asleep again: this request wakes it
		req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/page", nil)
		req.Host = fw.route.Host
		// A page load the wake does not answer with its starting page
		// (no text/html in Accept): it waits for the start.
		req.Header.Set("Accept", "*/*")
		req.Header.Set("Sec-Fetch-Dest", dest)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s after the wake: %d %.200q", dest, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("document"); !strings.Contains(got, scriptTag) {
		t.Errorf("the woken page has no browser-log script:\n%.300q", got)
	}
	if got := get("empty"); strings.Contains(got, scriptTag) || got != testPage {
		t.Errorf("a fetch after the wake: got %.300q; want the page as the service sent it", got)
	}
	if got := fw.serviceWakes.Load(); got != 2 {
		t.Errorf("%d service wakes; want 2", got)
	}
}
