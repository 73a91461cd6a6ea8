//go:build linux

package supervisor

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

// TestAdoptAfterDaemonRestart: supervisor A starts a service and shuts down
// (the daemon exits, the process keeps running); supervisor B adopts the
// record, learns of the process's death through its pidfd, records it once
// and applies the restart policy.
func TestAdoptAfterDaemonRestart(t *testing.T) {
	// Not parallel: it counts this process's descriptors.
	w := newWorld(t)
	recA, recB := newRecorder(), newRecorder()
	a := newSup(t, recA, Options{})
	spec := w.spec("api", `echo started >> runs; exec sleep 300`)
	if err := a.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	recA.until(t, "the first run to start", func() bool {
		b, _ := os.ReadFile(w.path("runs"))
		return strings.Count(string(b), "\n") == 1
	})
	recA.mu.Lock()
	record := recA.started[0]
	recA.mu.Unlock()
	a.Shutdown()
	if !pidAlive(record.Pid) {
		t.Fatalf("pid %d died with its supervisor's shutdown", record.Pid)
	}
	if record.StartTime == 0 || record.Pgid != record.Pid {
		t.Fatalf("record %+v; want a start time and pgid == pid", record)
	}

	b := newSup(t, recB, Options{Policy: fastPolicy})
	fdsBefore := fdCount(t)
	res := b.Adopt(context.Background(), []Record{record})
	if len(res) != 1 || res[0].Outcome != AdoptAdopted || res[0].Pid != record.Pid || res[0].Err != nil {
		t.Fatalf("Adopt = %+v; want adopted pid %d", res, record.Pid)
	}
	st, _ := b.State(spec.Key)
	if st.State != state.ServiceRunning || st.Pid != record.Pid {
		t.Errorf("status %+v; want running pid %d", st, record.Pid)
	}
	if n := fdsSettle(t, func(n int) bool { return n == fdsBefore+1 }); n != fdsBefore+1 {
		t.Errorf("open fds %d after adopting; want %d (one pidfd)", n, fdsBefore+1)
	}
	// Adopting the same record again is refused: no duplicate supervision.
	if res := b.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptSkipped {
		t.Errorf("second Adopt = %+v; want skipped", res)
	}

	killPid(record.Pid)
	recB.waitEvent(t, EventStarted, spec.Key, 1) // on-failure: restarted
	recB.mu.Lock()
	exits := recB.exits[spec.Key]
	recB.mu.Unlock()
	if len(exits) != 1 || exits[0].Pid != record.Pid || exits[0].State != state.ServiceBackoff {
		t.Errorf("B recorded exits %+v; want one, of pid %d, followed by a restart", exits, record.Pid)
	}
	recA.mu.Lock()
	if n := len(recA.exits[spec.Key]); n != 0 {
		t.Errorf("A (shut down) recorded %d exits; want 0", n)
	}
	recA.mu.Unlock()
	recB.until(t, "the restarted process to run", func() bool {
		b, _ := os.ReadFile(w.path("runs"))
		return strings.Count(string(b), "\n") == 2
	})
	if n := fdsSettle(t, func(n int) bool { return n <= fdsBefore }); n > fdsBefore {
		t.Errorf("open fds %d after the adopted process exited; want at most %d (the pidfd closed)", n, fdsBefore)
	}
}

// TestAdoptedStopEndsGroup stops an adopted service: the group is signalled
// by the recorded pgid and Stop waits until it is gone.
func TestAdoptedStopEndsGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	recA, recB := newRecorder(), newRecorder()
	a := newSup(t, recA, Options{})
	spec := w.spec("api", `sleep 300 & echo $! > child.pid; wait`)
	if err := a.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	child := w.readPid(t, "child.pid")
	recA.mu.Lock()
	record := recA.started[0]
	recA.mu.Unlock()
	a.Shutdown()

	b := newSup(t, recB, Options{})
	if res := b.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptAdopted {
		t.Fatalf("Adopt = %+v; want adopted", res)
	}
	if err := b.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if pidAlive(record.Pid) || pidAlive(child) {
		t.Errorf("after Stop: leader alive %v, child alive %v; want both gone", pidAlive(record.Pid), pidAlive(child))
	}
	recB.mu.Lock()
	defer recB.mu.Unlock()
	if ex := recB.exits[spec.Key]; len(ex) != 1 || ex[0].State != state.ServiceStopped {
		t.Errorf("exits %+v; want one, stopped", ex)
	}
}

// TestAdoptPidReusedIsLostAndNeverSignalled hands Adopt a record whose pid
// is a live process with another start time, as after pid reuse.
func TestAdoptPidReusedIsLostAndNeverSignalled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	stranger := exec.Command("sh", "-c", `trap 'echo signalled > sig; exit 1' TERM INT HUP QUIT USR1 USR2; echo $$ > ready; sleep 300 & wait`)
	stranger.Dir = w.dir
	stranger.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-stranger.Process.Pid, syscall.SIGKILL)
		_ = stranger.Wait()
	})
	w.readPid(t, "ready")
	pid := stranger.Process.Pid
	realStart, err := procStartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("api", "exec sleep 300")
	res := s.Adopt(context.Background(), []Record{{Key: spec.Key, Spec: spec, Pid: pid, Pgid: pid, StartTime: realStart + 1}})
	if res[0].Outcome != AdoptLost {
		t.Fatalf("Adopt = %+v; want lost", res)
	}
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Errorf("Stop of a lost service = %v; want nil", err)
	}
	st, _ := s.State(spec.Key)
	rec.mu.Lock()
	exits := rec.exits[spec.Key]
	lost := rec.count(EventLost, spec.Key)
	rec.mu.Unlock()
	if st.State != state.ServiceLost || len(exits) != 1 || exits[0].State != state.ServiceLost || lost != 1 {
		t.Errorf("state %s, exits %+v, lost events %d; want lost, one exit, one event", st.State, exits, lost)
	}
	if _, err := os.Stat(w.path("sig")); err == nil || !pidAlive(pid) {
		t.Errorf("the stranger pid %d was signalled (alive %v)", pid, pidAlive(pid))
	}
	if rec.count(EventStarted, Key{}) != 0 {
		t.Errorf("a lost service was restarted")
	}
}

// TestAdoptDiedWhileDown hands Adopt records of processes that are gone.
func TestAdoptDiedWhileDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		restart     Restart
		wantOutcome string
		wantState   state.Service
		wantStarts  int
	}{
		{RestartOnFailure, AdoptRestarted, state.ServiceRunning, 1},
		{RestartAlways, AdoptRestarted, state.ServiceRunning, 1},
		{RestartNever, AdoptExited, state.ServiceFailed, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.restart), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			gone := exec.Command("true")
			if err := gone.Run(); err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			s := newSup(t, rec, Options{})
			spec := w.spec("api", "exec sleep 300")
			spec.Restart = tt.restart
			pid := gone.Process.Pid
			res := s.Adopt(context.Background(), []Record{{Key: spec.Key, Spec: spec, Pid: pid, Pgid: pid, StartTime: 12345}})
			if res[0].Outcome != tt.wantOutcome || res[0].Err != nil {
				t.Fatalf("Adopt = %+v; want %s", res, tt.wantOutcome)
			}
			st, _ := s.State(spec.Key)
			rec.mu.Lock()
			exits, starts := rec.exits[spec.Key], len(rec.started)
			exited := rec.find(EventExited, spec.Key)
			rec.mu.Unlock()
			if st.State != tt.wantState || starts != tt.wantStarts {
				t.Errorf("state %s after %d starts; want %s after %d", st.State, starts, tt.wantState, tt.wantStarts)
			}
			if len(exits) != 1 || exits[0].Pid != pid || len(exited) != 1 || !strings.Contains(exited[0].Error, "while the daemon was down") {
				t.Errorf("exits %+v, events %+v; want one exit of pid %d reported as died while down", exits, exited, pid)
			}
			if tt.wantStarts > 0 && res[0].Pid == pid {
				t.Errorf("restarted pid = %d; want a new process", res[0].Pid)
			}
		})
	}
}

// TestAdoptManyNoFDLeak adopts 50 processes, kills them, and checks every
// pidfd was closed.
func TestAdoptManyNoFDLeak(t *testing.T) {
	// Not parallel: it counts this process's descriptors.
	w := newWorld(t)
	var recs []Record
	var cmds []*exec.Cmd
	for range 50 {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		st, err := procStartTime(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		spec := w.spec("svc"+string(rune('a'+len(recs)%26))+string(rune('a'+len(recs)/26)), "exec sleep 300")
		spec.Restart = RestartNever
		recs = append(recs, Record{Key: spec.Key, Spec: spec, Pid: c.Process.Pid, Pgid: c.Process.Pid, StartTime: st})
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	before := fdCount(t)
	for _, r := range s.Adopt(context.Background(), recs) {
		if r.Outcome != AdoptAdopted {
			t.Fatalf("Adopt = %+v; want adopted", r)
		}
	}
	for _, c := range cmds {
		_ = c.Process.Kill()
	}
	rec.waitEvent(t, EventExited, Key{}, len(recs))
	s.Shutdown()
	if after := fdsSettle(t, func(n int) bool { return n <= before }); after > before {
		t.Errorf("open fds %d after 50 adopted processes exited; want at most %d", after, before)
	}
}
