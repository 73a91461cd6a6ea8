//go:build linux

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/state"
)

func TestStopKillsTermIgnoringChildAfterTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	// The leader dies on SIGTERM; its child ignores SIGTERM (the ignored
	// disposition survives exec) and stays in the group.
	spec := w.spec("api", `sh -c 'trap "" TERM; echo $$ > child.pid; exec sleep 300' & wait`)
	spec.StopTimeout = 300 * time.Millisecond
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	child := w.readPid(t, "child.pid")
	st, _ := s.State(spec.Key)
	leader := st.Pid
	if cs, err := readStat(child); err != nil || cs.Pgrp != leader {
		t.Fatalf("child %d: stat %+v, %v; want it in group %d", child, cs, err, leader)
	}
	start := time.Now()
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatalf("Stop = %v; want nil", err)
	}
	took := time.Since(start)
	if pidAlive(child) || pidAlive(leader) || groupAlive(leader) {
		t.Errorf("after Stop: child alive %v, leader alive %v, group alive %v; want all gone", pidAlive(child), pidAlive(leader), groupAlive(leader))
	}
	// The child could only die from the SIGKILL sent after StopTimeout.
	if took < spec.StopTimeout {
		t.Errorf("Stop returned after %s; the SIGTERM-ignoring child cannot be gone before StopTimeout %s", took, spec.StopTimeout)
	}
	st, _ = s.State(spec.Key)
	rec.mu.Lock()
	exits := rec.exits[spec.Key]
	rec.mu.Unlock()
	if st.State != state.ServiceStopped || len(exits) != 1 || exits[0].State != state.ServiceStopped || exits[0].Signal != "SIGTERM" {
		t.Errorf("state %s, exits %+v; want stopped, one exit by SIGTERM", st.State, exits)
	}
}

func TestStopSignalIsConfigurable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("api", `trap 'echo got INT > sig; kill $p; exit 0' INT; echo $$ > trapped; sleep 300 & p=$!; wait`)
	spec.StopSignal = "INT"
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	w.readPid(t, "trapped") // the trap is installed
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(w.path("sig")); err != nil || string(b) != "got INT\n" {
		t.Errorf("sig file = %q, %v; want the INT trap to have run", b, err)
	}
}

func TestStopReportsEscapedDescendant(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{})
	spec := w.spec("api", `setsid sleep 300 & echo $! > escaped.pid; exec sleep 300`)
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	esc := w.readPid(t, "escaped.pid")
	t.Cleanup(func() { killPid(esc) })
	// Wait until it has left the group.
	deadline := time.Now().Add(hang)
	for {
		st, err := readStat(esc)
		if err == nil && st.Session == esc {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never left the group: %+v %v", esc, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := s.Stop(context.Background(), spec.Key)
	if !errors.Is(err, ErrEscaped) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(esc)+" ") {
		t.Fatalf("Stop = %v; want ErrEscaped naming pid %d", err, esc)
	}
	if !pidAlive(esc) {
		t.Errorf("escaped pid %d was killed; Stop should only report it", esc)
	}
}

func TestStopDuringBackoff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Policy: Policy{Base: time.Hour, GiveUpAfter: 5}})
	spec := w.spec("api", "exit 1")
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventRestarting, spec.Key, 1)
	if st, _ := s.State(spec.Key); st.State != state.ServiceBackoff {
		t.Errorf("state = %s; want backoff", st.State)
	}
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State(spec.Key); st.State != state.ServiceStopped {
		t.Errorf("state = %s; want stopped", st.State)
	}
}

// TestManyChildrenExitAtOnce starts 200 services that block on a lock the
// test holds, releases it so they all exit together, and checks that every
// exit is recorded exactly once and no zombie is left.
func TestManyChildrenExitAtOnce(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	lock := w.path("gate")
	f, err := os.Create(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(w.path("ready"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 200
	keys := make([]Key, n)
	for i := range n {
		spec := w.spec(fmt.Sprintf("svc%03d", i), fmt.Sprintf(`: > ready/%d; flock -s gate true; exit 7`, i))
		spec.Restart = RestartNever
		keys[i] = spec.Key
		if err := s.Start(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	rec.until(t, "every service to be ready", func() bool {
		ents, _ := os.ReadDir(w.path("ready"))
		return len(ents) == n
	})
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	rec.until(t, "every exit", func() bool { return rec.count(EventExited, Key{}) >= n })
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children after every exit was recorded: %v", z)
	}
	s.Shutdown() // every runner has returned: nothing more can be recorded
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, k := range keys {
		if ex := rec.exits[k]; len(ex) != 1 || ex[0].Code != 7 || ex[0].State != state.ServiceFailed {
			t.Errorf("%s: exits %+v; want exactly one, code 7, failed", k, ex)
		}
	}
}

// zombieChildren lists this process's children that are zombies.
func zombieChildren() []int {
	var z []int
	self := os.Getpid()
	for _, pid := range allPids() {
		if st, err := readStat(pid); err == nil && st.Ppid == self && st.State == 'Z' {
			z = append(z, pid)
		}
	}
	return z
}

func fdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// fdsSettle waits until this process's descriptor count satisfies ok and
// returns it (the last count when hang passes first). A count read once is
// a race: a start's pipes and a /proc read are closed by goroutines that a
// busy machine may run late, after the event the test waited on.
func fdsSettle(t *testing.T, ok func(n int) bool) int {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		n := fdCount(t)
		if ok(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFDsAfter1000Restarts crash-loops a service through 1,000 restarts and
// compares this process's open descriptors before and after.
func TestFDsAfter1000Restarts(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 process spawns")
	}
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Policy: Policy{Base: time.Nanosecond, Cap: time.Nanosecond, Stable: time.Hour, GiveUpAfter: 1 << 30}})
	before := fdCount(t)
	spec := w.spec("loop", "exit 1")
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.until(t, "1,000 restarts", func() bool { return rec.count(EventRestarting, spec.Key) >= 1000 })
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	after := fdsSettle(t, func(n int) bool { return n <= before })
	st, _ := s.State(spec.Key)
	t.Logf("open fds: %d before, %d after %d restarts", before, after, st.Restarts)
	if after > before {
		t.Errorf("open fds grew from %d to %d over %d restarts", before, after, st.Restarts)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children: %v", z)
	}
	if _, err := os.Stat(filepath.Dir(spec.LogPath)); err != nil {
		t.Error(err)
	}
}

// TestStartRacingStop: a Start while a Stop is under way waits for it and
// then starts the service again, rather than finding it "running".
func TestStartRacingStop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("api", `trap "" TERM; echo run >> runs; exec sleep 300`)
	// Once the trap is set the stop lasts its whole timeout, and that is the
	// window in which the test must see it stopping.
	spec.StopTimeout = 3 * time.Second
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	// Start returns at spawn: a TERM sent before the shell reached its trap
	// ends it at once and the stop is over before anyone sees it (CI did).
	rec.until(t, "the trap to be set", func() bool {
		b, _ := os.ReadFile(w.path("runs"))
		return strings.Count(string(b), "\n") == 1
	})
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background(), spec.Key) }()
	rec.until(t, "the stop to begin", func() bool {
		st, _ := s.State(spec.Key)
		return st.State == state.ServiceStopping
	})
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	st, _ := s.State(spec.Key)
	rec.mu.Lock()
	starts := len(rec.started)
	rec.mu.Unlock()
	if st.Pid == 0 || starts != 2 {
		t.Errorf("after Stop and a racing Start: pid %d, %d starts; want a running process, 2 starts", st.Pid, starts)
	}
}
