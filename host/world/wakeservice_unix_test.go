//go:build !windows

package world

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// wakeWorld: base starts with the world; api and web start on their first
// request, web after api (it depends on it) and stopped again when idle.
// Each wake service appends a line to $HOLD/<name>.starts as it starts.
const wakeWorld = `
[project]
name = "wk"
port_range = PORTRANGE

[agents]
expose = ["web", "base"]

[services.base]
cmd    = 'exec sleep 100741'
url    = "base"
health = { exec = "true" }

[services.api]
cmd    = 'echo started >> "$HOLD/api.starts"; exec sleep 100742'
url    = "api"
wake   = true
health = { exec = "true" }

[services.web]
cmd          = 'echo started >> "$HOLD/web.starts"; exec sleep 100743'
url          = "web"
wake         = true
idle_suspend = "300ms"
depends_on   = ["api"]
health       = { exec = "true" }
`

// TestWakeService: up starts base and leaves the wake services waiting
// (the plan says so, status and env too, their routes wake on request, a
// second up has nothing to do); concurrent wakes of web start api first
// and each once; web idles out back to waiting (not stopped by the user)
// while api, which has no idle_suspend, runs on; the next wake starts web
// again; down and up leave both waiting again.
func TestWakeService(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, wakeWorld)
	starts := func(name string) int {
		b, err := os.ReadFile(filepath.Join(f.hold, name+".starts"))
		if err != nil {
			return 0
		}
		return strings.Count(string(b), "started")
	}
	// wantStarts waits for the wake services' start lines (the shell
	// writes one after the probe may have passed), then wants exactly
	// these counts.
	wantStarts := func(api, web int) {
		t.Helper()
		f.waitFor("the start lines", func() bool { return starts("api") >= api && starts("web") >= web })
		if a, b := starts("api"), starts("web"); a != api || b != web {
			t.Errorf("api started %d times, web %d; want %d and %d", a, b, api, web)
		}
	}
	routes := func() map[string]proxy.RouteState {
		t.Helper()
		rs, err := f.e.Routes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]proxy.RouteState{}
		for _, r := range rs {
			out[r.Service] = r.State
		}
		return out
	}
	status := func() *api.World {
		t.Helper()
		st, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref(), Here: true})
		if err != nil {
			t.Fatal(err)
		}
		return &st.Worlds[0]
	}
	wantWaiting := func(names ...string) {
		t.Helper()
		w := status()
		if w.State != state.WorldUp {
			t.Errorf("status: world %s (%s); want up", w.State, w.Reason)
		}
		for _, sv := range w.Services {
			for _, n := range names {
				if sv.Name == n && (sv.State != state.ServiceStopped || sv.Reason != WaitsForRequest) {
					t.Errorf("status: %s is %s (%q); want stopped, %q", n, sv.State, sv.Reason, WaitsForRequest)
				}
			}
		}
		rs := routes()
		for _, n := range names {
			if rs[n] != proxy.StateWake {
				t.Errorf("route of %s meets %q; want %q", n, rs[n], proxy.StateWake)
			}
		}
	}

	// 1. up: base runs, api and web wait.
	w, err := f.up(ctx, f.upArgs())
	if err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	if w.State != state.WorldUp {
		t.Errorf("up: world %s; want up", w.State)
	}
	if n := starts("api") + starts("web"); n != 0 {
		t.Fatalf("up started a wake service (%d starts)", n)
	}
	wantWaiting("api", "web")
	if rs := routes(); rs["base"] != proxy.StateRunning {
		t.Errorf("route of base meets %q; want running", rs["base"])
	}
	env, err := f.e.Exposed(ctx, f.record())
	if err != nil {
		t.Fatal(err)
	}
	if env.Waiting["web"] != WaitsForRequest || env.Env["web"] == "" || env.Direct["web"] != "" {
		t.Errorf("env: waiting %v, env %v, direct %v; want web waiting with its proxied URL and no direct address", env.Waiting, env.Env, env.Direct)
	}
	dry := f.upArgs()
	dry.DryRun = true
	if w, err := f.up(ctx, dry); err != nil || w.Plan == nil || len(w.Plan.Wait) != 2 || len(w.Plan.Start) != 0 {
		t.Errorf("up --dry-run: %+v, %v; want api and web waiting, nothing started", w, err)
	} else if l := w.Plan.Lines(); !strings.Contains(strings.Join(l, "\n"), "wait      web: starts on its first request") {
		t.Errorf("plan lines %q lack web waiting", l)
	}
	if w, err := f.up(ctx, f.upArgs()); err != nil || !w.Noop {
		t.Errorf("a second up: noop %v, err %v; want nothing to do", w != nil && w.Noop, err)
	}
	// A restart of the whole world restarts base and leaves the waiting
	// ones waiting.
	if _, err := call(f, ctx, f.e.Restart, api.RestartArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	wantWaiting("api", "web")
	if n := starts("api") + starts("web"); n != 0 {
		t.Fatalf("restart started a wake service (%d starts)", n)
	}

	// 2. Five wakes of web at once: api then web, each started once.
	wk := f.e.Waker()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = wk.WakeService(ctx, "wk", "feat", "web")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("wake web: %v", err)
		}
	}
	wantStarts(1, 1)
	var woken []string
	f.fd.mu.Lock()
	for _, ev := range f.fd.events {
		if ev.Event == events.WorldWoken {
			woken = append(woken, ev.Service+": "+ev.Detail)
		}
	}
	f.fd.mu.Unlock()
	if len(woken) != 1 || woken[0] != "web: started api, web" {
		t.Errorf("world_woken events %q; want one, web: started api, web", woken)
	}
	if rs := routes(); rs["web"] != proxy.StateRunning || rs["api"] != proxy.StateRunning {
		t.Errorf("routes after the wake: %v; want web and api running", rs)
	}

	// 3. No request to web: its idle_suspend stops it; api runs on.
	f.waitFor("web to be stopped when idle", func() bool {
		st, ok := f.e.ServiceState("wk", "feat", "web")
		return !ok || st.Ended()
	})
	if st, _ := f.e.ServiceState("wk", "feat", "api"); !st.Live() {
		t.Errorf("api is %s after web idled out; want it running (it has no idle_suspend)", st)
	}
	wantWaiting("web")

	// 4. The next request wakes web again, alone.
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err != nil {
		t.Fatalf("wake web again: %v", err)
	}
	wantStarts(1, 2)

	// 5. A restarted daemon finds web running, without its idle timer:
	// StartAdmission's pass arms it again, and web idles out.
	f.e.woken.forget("wk", "feat")
	cfg, err := f.e.Config(f.record())
	if err != nil {
		t.Fatal(err)
	}
	f.e.armAdopted(f.record(), cfg)
	f.waitFor("a re-adopted web to be stopped when idle", func() bool {
		st, ok := f.e.ServiceState("wk", "feat", "web")
		return !ok || st.Ended()
	})
	wantWaiting("web")

	// 6. down, then up: both wait again; a wake of a down world is refused.
	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err == nil || !strings.Contains(err.Error(), "binky up feat") {
		t.Errorf("wake of a down world: %v; want it refused, naming binky up", err)
	}
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up again: %v\n%s", err, f.said)
	}
	wantWaiting("api", "web")
	wantStarts(1, 2)

	// 7. A selection without web leaves it out: no wake route, a wake
	// refused naming why; --only web brings api along, both waiting.
	only := f.upArgs()
	only.Only = []string{"base"}
	if _, err := f.up(ctx, only); err != nil {
		t.Fatalf("up --only base: %v\n%s", err, f.said)
	}
	if rs := routes(); rs["web"] == proxy.StateWake || rs["api"] == proxy.StateWake {
		t.Errorf("routes with web left out: %v; want no wake route", rs)
	}
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err == nil || !strings.Contains(err.Error(), "left out") {
		t.Errorf("wake of a service left out: %v; want it refused, saying so", err)
	}
	only.Only = []string{"web"}
	if _, err := f.up(ctx, only); err != nil {
		t.Fatalf("up --only web: %v\n%s", err, f.said)
	}
	wantWaiting("api", "web")
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err != nil {
		t.Fatalf("wake web in --only web: %v", err)
	}
	wantStarts(2, 3)
}
