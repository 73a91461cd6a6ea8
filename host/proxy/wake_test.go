package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeWaker wakes by publishing the route as running.
type fakeWaker struct {
	p        *Proxy
	route    Route
	wakeable bool
	wakes    atomic.Int32
	touches  atomic.Int32
	release  chan struct{} // Wake waits for it when non-nil
}

func (f *fakeWaker) Wakeable(project, worktree string) bool { return f.wakeable }
func (f *fakeWaker) Touch(project, worktree string)         { f.touches.Add(1) }
func (f *fakeWaker) Wake(ctx context.Context, project, worktree string) error {
	f.wakes.Add(1)
	if f.release != nil {
		<-f.release
	}
	r := f.route
	r.State = StateRunning
	f.p.Upsert(r)
	return nil
}

func wakeSetup(t *testing.T, wakeable bool) (*Proxy, *fakeWaker) {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) }))
	t.Cleanup(backend.Close)
	fw := &fakeWaker{wakeable: wakeable}
	p := startProxy(t, Options{Waker: fw, WakeTimeout: waitLimit}) // a bound: the fake wakes at once
	fw.p = p
	fw.route = Route{Host: "web.w1.acme.localhost", Target: strings.TrimPrefix(backend.URL, "http://"), State: StateSuspended, Project: "acme", Worktree: "w1", Service: "web"}
	p.Set([]Route{fw.route})
	return p, fw
}

func TestWakeServesAClientOnceTheWorldRuns(t *testing.T) {
	p, fw := wakeSetup(t, true)
	resp, body := get(t, p, "web.w1.acme.localhost", "/")
	if resp.StatusCode != 200 || body != "served" {
		t.Fatalf("got %d %q; want 200 served", resp.StatusCode, body)
	}
	if fw.wakes.Load() != 1 || fw.touches.Load() == 0 {
		t.Errorf("wakes %d touches %d; want 1 wake and a touch", fw.wakes.Load(), fw.touches.Load())
	}
}

func TestWakeGivesABrowserTheStartingPage(t *testing.T) {
	p, fw := wakeSetup(t, true)
	fw.release = make(chan struct{})
	req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
	req.Host = "web.w1.acme.localhost"
	req.Header.Set("Accept", "text/html,*/*")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "starting w1") || !strings.Contains(body, `http-equiv="refresh"`) {
		t.Errorf("got %d %.300q; want 503 with a refreshing starting page", resp.StatusCode, body)
	}
	// A second request while the first wake runs does not start another.
	req2, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
	req2.Host = "web.w1.acme.localhost"
	req2.Header.Set("Accept", "text/html")
	if r2, err := http.DefaultClient.Do(req2); err == nil {
		r2.Body.Close()
	}
	close(fw.release)
	if got := fw.wakes.Load(); got != 1 {
		t.Errorf("%d wakes for two requests; want 1", got)
	}
}

func TestNotWakeableGetsTheUnavailablePage(t *testing.T) {
	p, fw := wakeSetup(t, false)
	resp, body := get(t, p, "web.w1.acme.localhost", "/")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "suspended") {
		t.Errorf("got %d %.200q; want 503 naming the state", resp.StatusCode, body)
	}
	if fw.wakes.Load() != 0 {
		t.Errorf("woke a world that is not wakeable")
	}
}
