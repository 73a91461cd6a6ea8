//go:build unix

package supervisor

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/state"
)

// A running service whose probe starts failing turns unhealthy with a
// reason naming the probe and how long it has failed, and turns back to
// running when the probe passes again; each turn is one event.
func TestMonitorTurnsUnhealthyAndBack(t *testing.T) {
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 2})
	w := newWorld(t)
	ok := w.path("ok")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := w.spec("web", "exec sleep 300")
	spec.Health = &health.Probe{Exec: "test -f " + ok, Dir: w.dir, Env: spec.Env}
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventHealthy, spec.Key, 1)

	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventUnhealthy, spec.Key, 1)
	st, _ := s.State(spec.Key)
	if st.State != state.ServiceUnhealthy || st.Pid == 0 {
		t.Fatalf("after the probe failed: state %s pid %d, want unhealthy with its process", st.State, st.Pid)
	}
	if !strings.HasPrefix(st.Reason, "unhealthy: exec ") || !strings.Contains(st.Reason, " for ") {
		t.Fatalf("reason %q: want the probe and how long it failed", st.Reason)
	}

	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventHealthy, spec.Key, 2)
	st, _ = s.State(spec.Key)
	if st.State != state.ServiceRunning || st.Reason != "" {
		t.Fatalf("after the probe passed again: state %s reason %q, want running and no reason", st.State, st.Reason)
	}
	rec.mu.Lock()
	n := rec.count(EventUnhealthy, spec.Key)
	rec.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d unhealthy events for one spell of failures, want 1", n)
	}
}

// A service that was unhealthy at start and comes good later turns
// running: the monitor goes on after the start-up wait gave up.
func TestMonitorRecoversAfterStartGaveUp(t *testing.T) {
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 1})
	w := newWorld(t)
	ok := w.path("ok")
	spec := w.spec("web", "exec sleep 300")
	spec.Health = &health.Probe{Exec: "test -f " + ok, Dir: w.dir, Env: spec.Env, Timeout: 50 * time.Millisecond}
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventUnhealthy, spec.Key, 1)
	if st, _ := s.State(spec.Key); st.State != state.ServiceUnhealthy || !strings.HasPrefix(st.Reason, "unhealthy: ") {
		t.Fatalf("state %s reason %q after the start-up probe gave up", st.State, st.Reason)
	}
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventHealthy, spec.Key, 1)
	if st, _ := s.State(spec.Key); st.State != state.ServiceRunning {
		t.Fatalf("state %s once the probe passed", st.State)
	}
}
