//go:build linux

package supervisor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/state"
)

// An http probe's connection is kept alive between the probes of one
// process (health.Prober). These tests hold the supervisor to what that
// must not change: a service whose process let go of its listener, died,
// or was replaced by a new process on the same port is seen for what it
// is, not through the old connection.

// httpSpec is a service run by the test binary (TestHelperHTTP): an HTTP
// server with keep-alive on 127.0.0.1:port, probed over http.
func httpSpec(w world, name string, port int) Spec {
	spec := w.spec(name, `exec "$BINKY_SUP_TEST_BIN" -test.run='^TestHelperHTTP$'`)
	spec.Restart = RestartNever
	spec.Env = append(spec.Env,
		"BINKY_SUP_TEST_BIN="+os.Args[0],
		"BINKY_SUP_HTTP=127.0.0.1:"+strconv.Itoa(port),
		"PORT="+strconv.Itoa(port))
	spec.Health = &health.Probe{HTTP: "http://127.0.0.1:" + strconv.Itoa(port) + "/", Timeout: hang}
	return spec
}

// TestHelperHTTP is the service process of httpSpec. It writes its pid to
// http.pid and makes the file conns.PID.N for the N-th connection it
// accepts. The file "hush" makes it close
// its listener while it goes on answering the connections it has, as a
// server that stops accepting but keeps its kept-alive clients does.
func TestHelperHTTP(t *testing.T) {
	addr := os.Getenv("BINKY_SUP_HTTP")
	if addr == "" {
		t.Skip("helper process for httpSpec")
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	var ln net.Listener
	deadline := time.Now().Add(hang)
	for {
		var err error
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var conns atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				os.WriteFile(fmt.Sprintf("conns.%d.%d", os.Getpid(), conns.Add(1)), nil, 0o644)
			}
		},
	}
	go srv.Serve(ln)
	if err := os.WriteFile("http.pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		for !exists("hush") {
			time.Sleep(10 * time.Millisecond)
		}
		ln.Close() // the server's kept-alive connections stay open
		os.WriteFile("hushed", nil, 0o644)
	}()
	<-term
}

// waitState waits until key's state is want, and returns its status.
func waitState(t *testing.T, s *Supervisor, key Key, want state.Service) Status {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		st, _ := s.State(key)
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %s (%s) after %s; want %s", key, st.State, st.Reason, hang, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKeptAliveProbeSharesConnection: the periodic probes of one process
// go over one connection.
func TestKeptAliveProbeSharesConnection(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{HealthEvery: 10 * time.Millisecond})
	spec := httpSpec(w, "web", freePort(t))
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHealthy(ctx, spec.Key); err != nil {
		t.Fatal(err)
	}
	pid := w.readPid(t, "http.pid")
	// Some periodic probes later (each one a request on the connection).
	for i := 0; i < 20; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if exists(w.path(fmt.Sprintf("conns.%d.2", pid))) {
		t.Errorf("the probes of one process opened more than one connection")
	}
	if !exists(w.path(fmt.Sprintf("conns.%d.1", pid))) {
		t.Errorf("no probe connected")
	}
}

// TestKeptAliveProbeListenerGone: the process closed its listener but
// answers on the connection the probe kept: the service turns unhealthy,
// saying nothing listens.
func TestKeptAliveProbeListenerGone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 2})
	spec := httpSpec(w, "web", freePort(t))
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHealthy(ctx, spec.Key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.path("hush"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, s, spec.Key, state.ServiceUnhealthy)
	if want := "nothing listens on 127.0.0.1:" + strconv.Itoa(st.Port); !strings.Contains(st.Reason, want) {
		t.Errorf("reason %q; want it to say %q", st.Reason, want)
	}
}

// TestKeptAliveProbeDeadAndRestarted: the process behind the kept
// connection is killed; its restart, a new process on the same port, is
// running only once a probe of it passed, over a connection of its own.
func TestKeptAliveProbeDeadAndRestarted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{HealthEvery: 10 * time.Millisecond, UnhealthyAfter: 2, Policy: fastPolicy})
	spec := httpSpec(w, "web", freePort(t))
	spec.Restart = RestartOnFailure
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHealthy(ctx, spec.Key); err != nil {
		t.Fatal(err)
	}
	old := w.readPid(t, "http.pid")
	os.Remove(w.path("http.pid"))
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventHealthy, spec.Key, 2)
	pid := w.readPid(t, "http.pid")
	st, _ := s.State(spec.Key)
	if pid == old || st.Pid != pid || st.State != state.ServiceRunning {
		t.Fatalf("after the kill: %s pid %d (the new process is %d, the old %d); want running as the new one", st.State, st.Pid, pid, old)
	}
	if !exists(w.path(fmt.Sprintf("conns.%d.1", pid))) {
		t.Errorf("the new process was never connected to: its health came from elsewhere")
	}
}
