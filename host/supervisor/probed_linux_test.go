//go:build linux

package supervisor

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/state"
)

// What these tests hold the supervisor to: a service is reported running
// (or healthy) only on the port its process was started with, and only
// once a probe of that address has passed since the process started.

// freePort is a port nothing listens on as the test begins.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// portSpec is listenerSpec with $PORT set to the port it listens and is
// probed on, as the world gives a cmd service its recorded port.
func portSpec(w world, name string, port int) Spec {
	spec := listenerSpec(w, name, port, false)
	spec.Env = append(spec.Env, "PORT="+strconv.Itoa(port))
	return spec
}

// neverRunningOn fails the test if the service is ever seen running or
// healthy on port; it returns once done is closed.
func neverRunningOn(t *testing.T, s *Supervisor, key Key, port int, done <-chan struct{}) {
	t.Helper()
	for {
		if st, _ := s.State(key); st.Port == port && st.State == state.ServiceRunning {
			t.Errorf("%s reported %s on port %d (pid %d), which no probe confirmed", key, st.State, port, st.Pid)
			return
		}
		select {
		case <-done:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// (a) The repro of issue 39: a world's recorded port moved while its
// service ran; up started the service again with the new port and was
// told it was healthy, and status said running on a port nothing listened
// on. A start that would move a running service is refused, naming both
// ports, and the service is reported on the port it runs on.
func TestStartRefusesPortChangeOfRunningService(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 2})
	oldPort, newPort := freePort(t), freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	goFile(t, w)
	if err := s.Start(ctx, portSpec(w, "api", oldPort)); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHealthy(ctx, Key{Project: w.project, Worktree: "wt", Service: "api"}); err != nil {
		t.Fatalf("WaitHealthy on its first port = %v", err)
	}
	moved := portSpec(w, "api", newPort)
	err := s.Start(ctx, moved)
	if err == nil {
		// What main did: the start was a no-op and the old run's health
		// was taken for the new port's.
		if werr := s.WaitHealthy(ctx, moved.Key); werr == nil {
			t.Fatalf("Start on port %d while it runs on %d = nil and WaitHealthy = nil: reported healthy on a port nothing listens on", newPort, oldPort)
		}
		t.Fatalf("Start on port %d while it runs on %d = nil; want it refused", newPort, oldPort)
	}
	if !errors.Is(err, ErrPortChanged) {
		t.Errorf("Start = %v; want ErrPortChanged", err)
	}
	for _, p := range []int{oldPort, newPort} {
		if !strings.Contains(err.Error(), strconv.Itoa(p)) {
			t.Errorf("Start = %v; want it to name port %d", err, p)
		}
	}
	st, _ := s.State(moved.Key)
	if st.Port != oldPort || st.State != state.ServiceRunning {
		t.Errorf("state %s on port %d; want running on the port it was started with, %d", st.State, st.Port, oldPort)
	}

	// Stopped, it starts on the new port, and is running there only once
	// the probe of that port passed.
	if err := s.Stop(ctx, moved.Key); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, moved); err != nil {
		t.Fatalf("Start on port %d after a stop = %v", newPort, err)
	}
	if err := s.WaitHealthy(ctx, moved.Key); err != nil {
		t.Fatalf("WaitHealthy on port %d = %v", newPort, err)
	}
	if st, _ := s.State(moved.Key); st.Port != newPort || st.State != state.ServiceRunning {
		t.Errorf("state %s on port %d after the restart; want running on %d", st.State, st.Port, newPort)
	}
}

// (a) A service that listens on another port than its recorded one is
// never running: starting until its start grace (the probe's timeout)
// ends, then unhealthy, with the probe named.
func TestServiceOnWrongPortIsNeverRunning(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 2})
	recorded, actual := freePort(t), freePort(t)
	spec := portSpec(w, "api", actual)
	spec.Env = append(spec.Env, "PORT="+strconv.Itoa(recorded))
	spec.Health.TCP = "127.0.0.1:" + strconv.Itoa(recorded)
	spec.Health.Timeout = 200 * time.Millisecond // the start grace
	goFile(t, w)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() { defer close(watched); neverRunningOn(t, s, spec.Key, recorded, done) }()
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventUnhealthy, spec.Key, 1)
	st, _ := s.State(spec.Key)
	close(done)
	<-watched
	if st.State != state.ServiceUnhealthy || !strings.Contains(st.Reason, "tcp 127.0.0.1:"+strconv.Itoa(recorded)) {
		t.Errorf("state %s reason %q; want unhealthy naming the probe of port %d", st.State, st.Reason, recorded)
	}
	rec.mu.Lock()
	healthy := rec.count(EventHealthy, spec.Key)
	rec.mu.Unlock()
	if healthy != 0 {
		t.Errorf("%d healthy events for a service that never answered its recorded port", healthy)
	}
}

// (b) A running, healthy service whose listener closes while its process
// lives on turns unhealthy: the monitor probes the address it was started
// with, every HealthEvery, UnhealthyAfter failures in a row.
func TestMonitorCatchesSilentPort(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 3})
	port := freePort(t)
	spec := portSpec(w, "api", port)
	goFile(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHealthy(ctx, spec.Key); err != nil {
		t.Fatal(err)
	}
	before, _ := s.State(spec.Key)
	if err := os.WriteFile(w.path("hush"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec.until(t, "the listener to close", func() bool { return exists(w.path("hushed")) })
	rec.waitEvent(t, EventUnhealthy, spec.Key, 1)
	st, _ := s.State(spec.Key)
	if st.State != state.ServiceUnhealthy || st.Pid != before.Pid || st.Port != port {
		t.Errorf("state %s pid %d port %d; want unhealthy, pid %d still running on port %d", st.State, st.Pid, st.Port, before.Pid, port)
	}
	if want := "unhealthy: tcp 127.0.0.1:" + strconv.Itoa(port) + ": "; !strings.HasPrefix(st.Reason, want) {
		t.Errorf("reason %q; want it to start %q", st.Reason, want)
	}
}

// (c) Status never says running before a probe passed: not for a process
// just started, and not for one a new daemon adopts (it was recorded at
// its start, before any probe, and may never have answered, or have
// stopped answering while no daemon watched).
func TestRunningOnlyAfterAProbePassed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	recA, recB := newRecorder(), newRecorder()
	a := newSup(t, recA, Options{HealthEvery: 10 * time.Millisecond})
	port := freePort(t)
	spec := portSpec(w, "api", port) // listens once the file "go" exists
	if err := a.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	recA.waitEvent(t, EventStarted, spec.Key, 1)
	if st, _ := a.State(spec.Key); st.State != state.ServiceStarting {
		t.Fatalf("state %s before its port answers; want starting", st.State)
	}
	recA.mu.Lock()
	record := recA.started[0]
	recA.mu.Unlock()
	a.Shutdown() // the daemon exits; the process lives on, still silent

	b := newSup(t, recB, Options{HealthEvery: 10 * time.Millisecond})
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() { defer close(watched); neverRunningOn(t, b, spec.Key, port, done) }()
	res := b.Adopt(context.Background(), []Record{record})
	if len(res) != 1 || res[0].Outcome != AdoptAdopted {
		t.Fatalf("Adopt = %+v; want adopted", res)
	}
	st, _ := b.State(spec.Key)
	close(done)
	<-watched
	if st.State != state.ServiceStarting || st.Pid != record.Pid {
		t.Fatalf("adopted: state %s pid %d before its port answers; want starting, pid %d", st.State, st.Pid, record.Pid)
	}
	goFile(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := b.WaitHealthy(ctx, spec.Key); err != nil {
		t.Fatalf("WaitHealthy once the adopted process listens = %v", err)
	}
	if st, _ := b.State(spec.Key); st.State != state.ServiceRunning || st.Port != port {
		t.Errorf("state %s port %d once probed; want running on %d", st.State, st.Port, port)
	}
}
