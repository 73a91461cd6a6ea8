//go:build !windows

package world

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// TestWakeServiceIdleWaitsForOpenConnection: the idle timer of a woken
// service that fires while the proxy counts a connection open to it (a
// dev server's live-reload socket) leaves it running, however long; once
// the connection closed it stops it idle_suspend after the close, not
// before, and it waits for its next request. The clock is the test's and
// the checks are called directly (the real timer is an hour away).
func TestWakeServiceIdleWaitsForOpenConnection(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, strings.Replace(wakeWorld, `idle_suspend = "300ms"`, `idle_suspend = "1h"`, 1))
	clk := &testClock{t: time.Unix(2_000_000, 0)}
	f.e.woken.mu.Lock()
	f.e.woken.now = clk.now
	f.e.woken.mu.Unlock()
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	if err := f.e.Waker().WakeService(ctx, "wk", "feat", "web"); err != nil {
		t.Fatalf("wake web: %v", err)
	}
	f.e.woken.mu.Lock()
	sv := f.e.woken.m[wokenKey("wk", "feat", "web")]
	f.e.woken.mu.Unlock()
	if sv == nil {
		t.Fatal("a woken web has no idle timer")
	}
	running := func(when string) {
		t.Helper()
		if st, ok := f.e.ServiceState("wk", "feat", "web"); !ok || !st.Live() {
			t.Fatalf("%s: web is %v; want it running", when, st)
		}
		if !hasTimer(f, "web") {
			t.Fatalf("%s: web's idle timer is gone; want it armed", when)
		}
	}

	// A socket open for three idle_suspends: every check leaves web.
	f.fd.setActivity("wk", "feat", "web", 1, time.Time{})
	for range 3 {
		clk.add(time.Hour + time.Second)
		f.e.idleCheck(sv)
		running("a check with a connection open")
	}

	// Closed 10 minutes after the last check: 59 minutes on, web runs.
	closed := clk.add(10 * time.Minute)
	f.fd.setActivity("wk", "feat", "web", 0, closed)
	clk.add(59 * time.Minute)
	f.e.idleCheck(sv)
	running("59 minutes after the close (idle_suspend 1h)")

	// An hour after the close, web stops and waits for its next request.
	clk.add(time.Minute + time.Second)
	f.e.idleCheck(sv)
	if st, ok := f.e.ServiceState("wk", "feat", "web"); ok && st.Live() {
		t.Fatalf("an hour after the close web is %v; want it stopped", st)
	}
	st, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref(), Here: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Worlds[0].Services {
		if s.Name == "web" && (s.State != state.ServiceStopped || s.Reason != WaitsForRequest) {
			t.Errorf("status: web %s (%q); want stopped, %q", s.State, s.Reason, WaitsForRequest)
		}
	}
	rs, _ := f.e.Routes(ctx)
	for _, r := range rs {
		if r.Service == "web" && r.State != proxy.StateWake {
			t.Errorf("web's route meets %q; want %q", r.State, proxy.StateWake)
		}
	}
}
