//go:build !windows

package world

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// hasTimer reports whether service of the fixture's world has an idle
// timer armed.
func hasTimer(f *fixture, service string) bool {
	f.e.woken.mu.Lock()
	defer f.e.woken.mu.Unlock()
	return f.e.woken.m[wokenKey("wk", "feat", service)] != nil
}

// TestWakeServiceStopBeatsIdleTimer: binky stop of a woken service with
// idle_suspend drops its idle timer (a later idle check acts on nothing),
// leaves it stopped by the user (no wake route, no wake) however long it
// waits; binky start arms its timer anew, counting from the start, and it
// idles back to waiting.
func TestWakeServiceStopBeatsIdleTimer(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, strings.Replace(wakeWorld, `idle_suspend = "300ms"`, `idle_suspend = "1h"`, 1))
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	wk := f.e.Waker()
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err != nil {
		t.Fatalf("wake web: %v", err)
	}
	if !hasTimer(f, "web") {
		t.Fatal("a woken web has no idle timer")
	}
	if _, err := call(f, ctx, f.e.StopServices, api.ServicesArgs{WorldRef: f.ref(), Services: []string{"web"}}); err != nil {
		t.Fatalf("stop web: %v", err)
	}
	if hasTimer(f, "web") {
		t.Error("binky stop left web's idle timer armed")
	}
	st, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref(), Here: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range st.Worlds[0].Services {
		if sv.Name == "web" && (sv.State != state.ServiceStopped || sv.Reason != StoppedByUser) {
			t.Errorf("status: web %s (%q); want stopped, %q", sv.State, sv.Reason, StoppedByUser)
		}
	}
	rs, _ := f.e.Routes(ctx)
	for _, r := range rs {
		if r.Service == "web" && r.State == proxy.StateWake {
			t.Error("web stopped by binky stop has a wake route")
		}
	}
	if err := wk.WakeService(ctx, "wk", "feat", "web"); err == nil || !strings.Contains(err.Error(), "binky stop") {
		t.Errorf("wake of a web binky stop stopped: %v; want it refused, naming binky stop", err)
	}
	if _, err := call(f, ctx, f.e.StartServices, api.ServicesArgs{WorldRef: f.ref(), Services: []string{"web"}}); err != nil {
		t.Fatalf("start web: %v", err)
	}
	if !hasTimer(f, "web") {
		t.Error("binky start of a wake service with idle_suspend armed no idle timer (a restarted daemon would arm one)")
	}
}

// TestWakeServiceChangedCmd: the cmd of a wake service changes between
// ups. While it waits, up records the new run and starts nothing; the
// next wake runs the new cmd. While it runs (woken), up restarts it with
// the new cmd, or leaves it waiting; never the old process on the new
// record, never two.
func TestWakeServiceChangedCmd(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, strings.Replace(wakeWorld, `idle_suspend = "300ms"`, `idle_suspend = "1h"`, 1))
	lines := func() string {
		b, _ := os.ReadFile(filepath.Join(f.hold, "web.starts"))
		return string(b)
	}
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	f.editConfig(`echo started >> "$HOLD/web.starts"; exec sleep 100743`, `echo second >> "$HOLD/web.starts"; exec sleep 100753`)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up with web's cmd changed: %v\n%s", err, f.said)
	}
	if l := lines(); l != "" {
		t.Fatalf("up with a waiting web's cmd changed started it: %q", l)
	}
	if err := f.e.Waker().WakeService(ctx, "wk", "feat", "web"); err != nil {
		t.Fatalf("wake web: %v", err)
	}
	f.waitFor("web's start line", func() bool { return lines() != "" })
	if l := lines(); l != "second\n" {
		t.Errorf("the wake after the change ran %q; want the new cmd (second)", l)
	}
	old := f.pids()["web"]
	f.wantAlive(map[string]int{"web": old}, "web")

	f.editConfig(`echo second >> "$HOLD/web.starts"; exec sleep 100753`, `echo third >> "$HOLD/web.starts"; exec sleep 100763`)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up with a woken web's cmd changed: %v\n%s", err, f.said)
	}
	f.wantDead(old)
	st, ok := f.e.ServiceState("wk", "feat", "web")
	now := f.pids()["web"]
	t.Logf("after up: web %v (known %v), pid %d, lines %q\n%s", st, ok, now, lines(), f.said)
	if ok && st.Live() {
		f.waitFor("web's third start line", func() bool { return strings.Contains(lines(), "third") })
	} else {
		if err := f.e.Waker().WakeService(ctx, "wk", "feat", "web"); err != nil {
			t.Fatalf("wake web: %v", err)
		}
		f.waitFor("web's third start line", func() bool { return strings.Contains(lines(), "third") })
	}
	if l := lines(); l != "second\nthird\n" {
		t.Errorf("web's starts %q; want second then third", l)
	}
	if w, err := f.up(ctx, f.upArgs()); err != nil || !w.Noop {
		t.Errorf("a second up: noop %v, err %v\n%s", w != nil && w.Noop, err, f.said)
	}
}

// TestWakeServiceToggled: wake turned off on a waiting service makes the
// next up start it (and its route serve); turned on again on a running
// one, up leaves it running (it does not stop what serves), and the
// plan's second up has nothing to do.
func TestWakeServiceToggled(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, wakeWorld)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	f.editConfig("wake   = true\nhealth = { exec = \"true\" }\n\n[services.web]", "health = { exec = \"true\" }\n\n[services.web]")
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up with api's wake off: %v\n%s", err, f.said)
	}
	st, ok := f.e.ServiceState("wk", "feat", "api")
	if !ok || !st.Live() {
		t.Fatalf("api after wake was turned off: %v (known %v); want running\n%s", st, ok, f.said)
	}
	rs, _ := f.e.Routes(ctx)
	for _, r := range rs {
		if r.Service == "api" && r.State != proxy.StateRunning {
			t.Errorf("api's route meets %q; want running", r.State)
		}
	}
	pid := f.pids()["api"]
	f.editConfig("[services.api]\ncmd    = 'echo started >> \"$HOLD/api.starts\"; exec sleep 100742'\nurl    = \"api\"\n", "[services.api]\ncmd    = 'echo started >> \"$HOLD/api.starts\"; exec sleep 100742'\nurl    = \"api\"\nwake   = true\n")
	w, err := f.up(ctx, f.upArgs())
	if err != nil {
		t.Fatalf("up with api's wake on again: %v\n%s", err, f.said)
	}
	t.Logf("up with wake on again:\n%s", f.said)
	if st, ok := f.e.ServiceState("wk", "feat", "api"); ok && st.Live() {
		if f.pids()["api"] != pid {
			t.Errorf("api restarted (pid %d → %d) by turning wake on", pid, f.pids()["api"])
		}
	} else if rs, _ := f.e.Routes(ctx); !hasWakeRoute(rs, "api") {
		t.Errorf("api stopped by up with wake on, but its route does not wake it: %v (world %s)", rs, w.State)
	}
	if w, err := f.up(ctx, f.upArgs()); err != nil || !w.Noop {
		t.Errorf("a second up: noop %v, err %v\n%s", w != nil && w.Noop, err, f.said)
	}
}

func hasWakeRoute(rs []proxy.Route, service string) bool {
	for _, r := range rs {
		if r.Service == service && r.State == proxy.StateWake {
			return true
		}
	}
	return false
}
