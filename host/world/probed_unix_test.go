//go:build !windows

package world

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// portWorld has two cmd services with a port each, no probe.
const portWorld = `
[project]
name = "fx"
port_range = PORTRANGE

[services.a]
cmd   = 'exec sleep 100711'
ports = ["http"]

[services.b]
cmd   = 'exec sleep 100712'
ports = ["http"]
`

func serviceOf(t *testing.T, w *api.World, name string) api.Service {
	t.Helper()
	for _, sv := range w.Services {
		if sv.Name == name {
			return sv
		}
	}
	t.Fatalf("status has no service %s: %+v", name, w.Services)
	return api.Service{}
}

// Issue 39, repro 1's last sentence: the recorded port of a running
// service moved while its process kept the port it was started with, and
// status said running. Status compares the port the supervisor started
// the process with against the record: unhealthy, naming both ports and
// the fix.
func TestStatusNamesPortMovedUnderRunningService(t *testing.T) {
	gittest.Isolate(t)
	f := newFixture(t, portWorld)
	ctx := context.Background()
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	rec := f.record()
	sv, err := f.reg.Service(ctx, rec.ID, "a")
	if err != nil {
		t.Fatal(err)
	}
	started := sv.Ports["http"]
	moved := started + 40 // inside the test's range, away from the block
	sv.Ports = map[string]int{"http": moved}
	sv.State = ""
	if err := f.reg.UpsertService(ctx, sv); err != nil {
		t.Fatal(err)
	}
	res, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref()})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Worlds[0]
	a := serviceOf(t, &w, "a")
	if a.State != state.ServiceUnhealthy {
		t.Errorf("a: state %s on recorded port %d while its process runs on %d; want unhealthy", a.State, a.Port, started)
	}
	for _, want := range []string{strconv.Itoa(started), strconv.Itoa(moved), "binky restart"} {
		if !strings.Contains(a.Reason, want) {
			t.Errorf("a: reason %q; want it to name %s", a.Reason, want)
		}
	}
	if b := serviceOf(t, &w, "b"); b.State != state.ServiceRunning || b.Reason != "" {
		t.Errorf("b: state %s (%q); want running", b.State, b.Reason)
	}
	if w.State != state.WorldDegraded {
		t.Errorf("world %s (%s); want degraded", w.State, w.Reason)
	}
}

// Issue 39, repro 1 as a user meets it: a third service is added while
// the port after the world's block is taken, so the block moves. Whatever
// up does about it, no service may be reported running on a recorded port
// its process was not started with (main said "healthy a" and status
// "running" on a port nothing listened on).
func TestUpAfterBlockMovesNeverVouchesForOldPort(t *testing.T) {
	gittest.Isolate(t)
	f := newFixture(t, portWorld)
	ctx := context.Background()
	w, err := f.up(ctx, f.upArgs())
	if err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	next := w.Ports[1] + 1
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(next))
	if err != nil {
		t.Fatalf("hold port %d after the block %v: %v", next, w.Ports, err)
	}
	defer ln.Close()
	f.editConfig(`[services.b]`, "[services.c]\ncmd   = 'exec sleep 100713'\nports = [\"http\"]\n\n[services.b]")
	_, err = f.up(ctx, f.upArgs())
	t.Logf("second up: %v\n%s", err, f.said)
	res, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref()})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Worlds[0].Ports; got == w.Ports {
		t.Logf("the block stayed at %v", got)
	}
	f.wantStartedOnRecorded(res.Worlds[0])

	// What the refusal tells the user to do works: restart moves it.
	if _, err := f.restart(ctx, api.RestartArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("restart: %v\n%s", err, f.said)
	}
	res, err = f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref()})
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range res.Worlds[0].Services {
		if sv.State != state.ServiceRunning {
			t.Errorf("%s after restart: %s (%s); want running", sv.Name, sv.State, sv.Reason)
		}
	}
	f.wantStartedOnRecorded(res.Worlds[0])
}

// wantStartedOnRecorded fails for a service w reports running on a
// recorded port its process was not started with.
func (f *fixture) wantStartedOnRecorded(w api.World) {
	f.t.Helper()
	for _, sv := range w.Services {
		st, _ := f.e.sup.State(f.e.SupKey(w.Project, w.Worktree, sv.Name))
		if sv.State == state.ServiceRunning && st.Port != sv.Port {
			f.t.Errorf("%s: status says running on recorded port %d; its process (pid %d) was started on %d", sv.Name, sv.Port, st.Pid, st.Port)
		}
	}
}
