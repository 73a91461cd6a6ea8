//go:build !windows

package world

import (
	"context"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// A service binky stop stopped stays stopped: status says so without
// calling the world degraded, up has nothing to do and does not start it,
// down and up leave it stopped, and binky start starts it again. Named
// alone, from the world's worktree, it is a service, not a world.
func TestStopServiceStaysStopped(t *testing.T) {
	gittest.Isolate(t)
	f := newFixture(t, fixtureWorld)
	ctx := context.Background()
	upFirst(t, f)
	before := f.pids()

	here := f.ref()
	here.Name = "side" // no world is called side: the service of the world here
	w, err := f.stopServices(ctx, api.ServicesArgs{WorldRef: here})
	if err != nil {
		t.Fatalf("stop side: %v\n%s", err, f.said)
	}
	f.wantDead(before["side"])
	if sv := serviceOf(t, w, "side"); sv.State != state.ServiceStopped || sv.Reason != StoppedByUser {
		t.Errorf("side after stop: %s %q; want stopped, %q", sv.State, sv.Reason, StoppedByUser)
	}
	if w.State != state.WorldUp || w.Reason != "" {
		t.Errorf("world after stopping one service: %s %q; want up: the user stopped it", w.State, w.Reason)
	}

	w, err = f.up(ctx, f.upArgs())
	if err != nil {
		t.Fatalf("up after stop: %v\n%s", err, f.said)
	}
	if !w.Noop {
		t.Errorf("up after binky stop side is not a noop: %s", f.said)
	}
	if st, ok := f.e.sup.State(f.e.SupKey("fx", "feat", "side")); ok && st.State.Live() {
		t.Errorf("up started side again (%s); want it left stopped", st.State)
	}

	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("down: %v", err)
	}
	// A request through the proxy wakes the down world: not side.
	rec := f.record()
	cfg, err := f.e.Config(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.WakeStart(ctx, cfg, rec); err != nil {
		t.Fatalf("wake: %v", err)
	}
	if st, ok := f.e.sup.State(f.e.SupKey("fx", "feat", "side")); ok && st.State.Live() {
		t.Errorf("a wake started side, which binky stop stopped")
	}
	w, err = f.up(ctx, f.upArgs())
	if err != nil {
		t.Fatalf("up after down: %v\n%s", err, f.said)
	}
	if sv := serviceOf(t, w, "side"); sv.State != state.ServiceStopped || sv.Reason != StoppedByUser {
		t.Errorf("side after down and up: %s %q; want still stopped by binky stop", sv.State, sv.Reason)
	}
	f.wantAlive(f.pids(), "api", "web")

	w, err = f.startServices(ctx, api.ServicesArgs{WorldRef: f.ref(), Services: []string{"side"}})
	if err != nil {
		t.Fatalf("start side: %v\n%s", err, f.said)
	}
	if sv := serviceOf(t, w, "side"); !sv.State.Running() || sv.Reason != "" {
		t.Errorf("side after start: %s %q; want running", sv.State, sv.Reason)
	}
	f.wantAlive(f.pids(), "side")
	w, err = f.up(ctx, f.upArgs())
	if err != nil || !w.Noop {
		t.Errorf("up after start: noop %v, %v; want nothing to do", w != nil && w.Noop, err)
	}

	// Neither verb takes a world for a service, nor an adapter service.
	if _, err := f.stopServices(ctx, api.ServicesArgs{WorldRef: f.ref(), Services: []string{"db"}}); err == nil {
		t.Errorf("stop db (a slice) succeeded; want it refused")
	}
	if _, err := f.stopServices(ctx, api.ServicesArgs{WorldRef: f.ref()}); err == nil {
		t.Errorf("stop with no service succeeded; want it refused, pointing at down")
	}
}

// restart, like stop and start, takes a service name alone for the world
// the caller stands in.
func TestRestartServiceOfWorldHere(t *testing.T) {
	gittest.Isolate(t)
	f := newFixture(t, fixtureWorld)
	ctx := context.Background()
	upFirst(t, f)
	before := f.pids()
	here := f.ref()
	here.Name = "side"
	if _, err := f.restart(ctx, api.RestartArgs{WorldRef: here}); err != nil {
		t.Fatalf("restart side from the world's worktree: %v\n%s", err, f.said)
	}
	after := f.pids()
	if after["side"] == before["side"] || after["api"] != before["api"] {
		t.Errorf("pids before %v, after %v; want only side restarted", before, after)
	}
}

// restart of every service leaves one binky stop stopped alone; restart
// naming it starts it, and up no longer counts it as stopped by the user.
func TestRestartAndUserStoppedService(t *testing.T) {
	gittest.Isolate(t)
	f := newFixture(t, fixtureWorld)
	ctx := context.Background()
	upFirst(t, f)
	if _, err := f.stopServices(ctx, api.ServicesArgs{WorldRef: f.ref(), Services: []string{"side"}}); err != nil {
		t.Fatalf("stop side: %v\n%s", err, f.said)
	}
	side := f.e.SupKey("fx", "feat", "side")
	if _, err := f.restart(ctx, api.RestartArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("restart: %v\n%s", err, f.said)
	}
	if st, ok := f.e.sup.State(side); ok && st.State.Live() {
		t.Errorf("restart of every service started side, which binky stop stopped")
	}
	if _, err := f.restart(ctx, api.RestartArgs{WorldRef: f.ref(), Services: []string{"side"}}); err != nil {
		t.Fatalf("restart side: %v\n%s", err, f.said)
	}
	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	if st, ok := f.e.sup.State(side); !ok || !st.State.Live() {
		t.Errorf("side, restarted by name, stayed stopped after down and up; want it running again")
	}
}
