//go:build linux

package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/health"
)

// foreignListener is another program on a service's port: a child of the
// test binary (TestHelperForeign), in a process group of its own and
// without the marker, listening on 127.0.0.1 and reporting each connection
// it accepts.
type foreignListener struct {
	port, pid int
	accepts   chan struct{}
	stop      func() // ends it; once stop returns its socket is closed
}

func listenForeign(t *testing.T) *foreignListener {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperForeign$")
	cmd.Env = append(os.Environ(), "BINKY_SUP_FOREIGN=127.0.0.1:0")
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, MarkerEnv+"=") })
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &foreignListener{pid: cmd.Process.Pid, accepts: make(chan struct{}, 1024)}
	f.stop = sync.OnceFunc(func() { stdin.Close(); cmd.Wait() })
	t.Cleanup(f.stop)
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("foreign listener said nothing: %v", sc.Err())
	}
	if _, err := fmt.Sscanf(sc.Text(), "listening %d", &f.port); err != nil {
		t.Fatalf("foreign listener said %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
			select {
			case f.accepts <- struct{}{}:
			default:
			}
		}
	}()
	return f
}

// TestHelperForeign is the process of listenForeign: it listens, says on
// which port, says "accept" for each connection, and ends when stdin
// closes.
func TestHelperForeign(t *testing.T) {
	addr := os.Getenv("BINKY_SUP_FOREIGN")
	if addr == "" {
		t.Skip("helper process for listenForeign")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			fmt.Println("accept")
		}
	}()
	io.Copy(io.Discard, os.Stdin)
	ln.Close()
}

// proxyListener stands for the daemon's own proxy: a listener of this
// process, counting the connections it accepts.
type proxyListener struct {
	port    int
	accepts chan struct{}
}

func listenProxy(t *testing.T) *proxyListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &proxyListener{port: ln.Addr().(*net.TCPAddr).Port, accepts: make(chan struct{}, 1024)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case p.accepts <- struct{}{}:
			default:
			}
		}
	}()
	return p
}

// answered waits until the service's probe has connected n times (each
// connection reported on accepts), failing the test if the service is
// reported healthy meanwhile. Attempts run one after another, so after the
// second the first has been judged.
func answered(t *testing.T, accepts <-chan struct{}, rec *recorder, key Key, n int) {
	t.Helper()
	deadline := time.After(hang)
	for n > 0 {
		select {
		case <-accepts:
			n--
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the probe did not connect within %s", hang)
		}
		rec.mu.Lock()
		healthy := rec.count(EventHealthy, key)
		rec.mu.Unlock()
		if healthy != 0 {
			t.Fatalf("%s was reported healthy while another program answered its port", key)
		}
	}
}

// listenerSpec is a service run by the test binary (TestHelperListener):
// it waits for the file "go" in its directory, then listens on
// 127.0.0.1:port until the file "hush" appears; with escape, a child in a
// session of its own (keeping the environment, so the marker) listens
// instead, writing its pid to "escaped.pid".
func listenerSpec(w world, name string, port int, escape bool) Spec {
	spec := w.spec(name, `exec "$BINKY_SUP_TEST_BIN" -test.run='^TestHelperListener$'`)
	spec.Restart = RestartNever
	spec.Env = append(spec.Env,
		"BINKY_SUP_TEST_BIN="+os.Args[0],
		"BINKY_SUP_LISTEN=127.0.0.1:"+strconv.Itoa(port),
		"BINKY_SUP_ESCAPE="+strconv.FormatBool(escape))
	spec.Health = &health.Probe{TCP: "127.0.0.1:" + strconv.Itoa(port), Timeout: hang}
	return spec
}

// TestHelperListener is the service process of listenerSpec.
func TestHelperListener(t *testing.T) {
	addr := os.Getenv("BINKY_SUP_LISTEN")
	if addr == "" {
		t.Skip("helper process for listenerSpec")
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	if os.Getenv("BINKY_SUP_ESCAPE") == "true" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperListener$")
		cmd.Env = append(os.Environ(), "BINKY_SUP_ESCAPE=false")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("escaped.pid", []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		<-term
		return
	}
	deadline := time.Now().Add(hang)
	for !exists("go") {
		if time.Now().After(deadline) {
			t.Fatal("no go file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var ln net.Listener
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
	defer ln.Close()
	fmt.Println("listening on", addr)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// The file "hush" closes the listener; the process lives on, silent,
	// and says so with the file "hushed".
	go func() {
		for !exists("hush") {
			time.Sleep(10 * time.Millisecond)
		}
		ln.Close()
		if err := os.WriteFile("hushed", nil, 0o644); err != nil {
			fmt.Println("cannot write hushed:", err)
		}
	}()
	<-term
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func goFile(t *testing.T, w world) {
	t.Helper()
	if err := os.WriteFile(w.path("go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHealthForeignListenerIsNotHealth: a service whose port is answered
// by another program is not healthy; the failure names the holder.
func TestHealthForeignListenerIsNotHealth(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	f := listenForeign(t)
	// The service never listens: it waits for "go", then exits.
	spec := w.spec("api", `while [ ! -e go ]; do sleep 0.01; done`)
	spec.Restart = RestartNever
	spec.Health = &health.Probe{TCP: "127.0.0.1:" + strconv.Itoa(f.port), Timeout: hang}
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	answered(t, f.accepts, rec, spec.Key, 2)
	goFile(t, w)
	wctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	err := s.WaitHealthy(wctx, spec.Key)
	want := fmt.Sprintf("port %d is answered by pid %d (", f.port, f.pid)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "TestHelperForeign$), not by this service") {
		t.Fatalf("WaitHealthy = %v; want a failure naming %s…TestHelperForeign$), not by this service", err, want)
	}
	if !errors.Is(err, health.ErrExited) {
		t.Errorf("WaitHealthy = %v; want it to end on the exit", err)
	}
}

// TestHealthOwnListenerAfterForeign: while another program answers the
// port the service is not healthy; once that program lets go and the
// service's own process listens — in its group, or escaped from it but
// carrying its marker — it is.
func TestHealthOwnListenerAfterForeign(t *testing.T) {
	t.Parallel()
	for _, escape := range []bool{false, true} {
		t.Run("escaped="+strconv.FormatBool(escape), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			rec := newRecorder()
			s := newSup(t, rec, Options{})
			f := listenForeign(t)
			spec := listenerSpec(w, "api", f.port, escape)
			ctx := context.Background()
			if err := s.Start(ctx, spec); err != nil {
				t.Fatal(err)
			}
			var escaped int
			if escape {
				escaped = w.readPid(t, "escaped.pid")
				t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })
			}
			answered(t, f.accepts, rec, spec.Key, 2)
			f.stop()
			goFile(t, w)
			wctx, cancel := context.WithTimeout(ctx, hang)
			defer cancel()
			if err := s.WaitHealthy(wctx, spec.Key); err != nil {
				t.Fatalf("WaitHealthy = %v; want healthy once its own process listens", err)
			}
			if !escape {
				return
			}
			// The listener really was outside the service's group: only the
			// marker made it the service's.
			st, ok := s.State(spec.Key)
			if !ok || st.Pgid == 0 {
				t.Fatalf("state %+v, %v; want a running service", st, ok)
			}
			if ps, err := readStat(escaped); err != nil || ps.Pgrp == st.Pgid {
				t.Errorf("escaped listener %d: group %d (%v); want one other than the service's %d", escaped, ps.Pgrp, err, st.Pgid)
			}
		})
	}
}

// TestHealthThroughProxy: a probe answered by the daemon itself went
// through its proxy, which forwards to the service's $PORT: the listener
// there is judged.
func TestHealthThroughProxy(t *testing.T) {
	t.Parallel()
	t.Run("foreign behind", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rec := newRecorder()
		s := newSup(t, rec, Options{})
		proxy, f := listenProxy(t), listenForeign(t)
		spec := w.spec("api", `while [ ! -e go ]; do sleep 0.01; done`)
		spec.Restart = RestartNever
		spec.Env = append(spec.Env, "PORT="+strconv.Itoa(f.port))
		spec.Health = &health.Probe{TCP: "127.0.0.1:" + strconv.Itoa(proxy.port), Timeout: hang}
		if err := s.Start(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
		answered(t, proxy.accepts, rec, spec.Key, 2)
		goFile(t, w)
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		err := s.WaitHealthy(ctx, spec.Key)
		if want := fmt.Sprintf("port %d is answered by pid %d (", f.port, f.pid); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("WaitHealthy = %v; want a failure naming %s…", err, want)
		}
	})
	t.Run("its own behind", func(t *testing.T) {
		t.Parallel()
		proxy := listenProxy(t)
		own := listenForeign(t) // here: the service's process, leader of its group
		spec := Spec{Key: Key{Project: "p", Worktree: "w", Service: "api"}, Env: []string{"PORT=" + strconv.Itoa(own.port)}}
		addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(proxy.port))
		if err := listenerCheck(spec, newRun(own.pid, own.pid, 0))(addr); err != nil {
			t.Errorf("check through the proxy, the service's own listener behind = %v; want nil", err)
		}
		err := listenerCheck(spec, newRun(1, 1, 0))(addr)
		if want := fmt.Sprintf("port %d is answered by pid %d (", own.port, own.pid); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("check through the proxy for another run = %v; want %s…", err, want)
		}
		spec.Env = nil // no $PORT: what is behind cannot be told
		if err := listenerCheck(spec, newRun(1, 1, 0))(addr); err != nil {
			t.Errorf("check through the proxy without $PORT = %v; want nil", err)
		}
	})
}

// TestOwnPids: the processes a listener is looked for in first are the
// run's process and its descendants (a grandchild too), not others.
func TestOwnPids(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", `sleep 60 & sh -c 'sleep 60 & wait' & wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL); cmd.Wait() })
	r := newRun(pid, pid, 0)
	deadline := time.Now().Add(hang)
	var got []int
	for {
		// sh, its sleep, the inner sh and its sleep: 4, once all have forked.
		if got = ownPids(r); len(got) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 4 || got[0] != pid {
		t.Fatalf("ownPids = %v; want pid %d and its 3 descendants", got, pid)
	}
	for _, p := range got {
		if st, err := readStat(p); err != nil || st.Pgrp != pid {
			t.Errorf("ownPids lists %d, in group %d (%v); want only the group of %d", p, st.Pgrp, err, pid)
		}
	}
	if slices.Contains(got, os.Getpid()) {
		t.Errorf("ownPids = %v; want no other process (this test's %d)", got, os.Getpid())
	}
	if got := ownPids(newRun(0, 0, 0)); got != nil {
		t.Errorf("ownPids of no process = %v; want none", got)
	}
}
