package supervisor

import (
	"context"
	"testing"
	"time"
)

// TestSuspendStopsTheGroupAndResumeContinuesIt: every process of the group
// is stopped ('T' in /proc) and continued, and the runner sees no exit.
func TestSuspendStopsTheGroupAndResumeContinuesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("api", `sh -c 'echo $$ > child.pid; exec sleep 300' & wait`)
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	child := w.readPid(t, "child.pid")
	st, _ := s.State(spec.Key)
	waitState := func(pid int, want bool) {
		t.Helper()
		deadline := time.Now().Add(hang)
		for {
			ps, err := readStat(pid)
			if err == nil && (ps.State == 'T') == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pid %d state %q (%v); want stopped %v", pid, ps.State, err, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := s.Suspend(spec.Key); err != nil {
		t.Fatal(err)
	}
	waitState(st.Pid, true)
	waitState(child, true)
	if err := s.Resume(spec.Key); err != nil {
		t.Fatal(err)
	}
	waitState(st.Pid, false)
	waitState(child, false)
	if got, _ := s.State(spec.Key); got.Pid != st.Pid || got.Restarts != 0 {
		t.Errorf("after suspend and resume: pid %d restarts %d; want pid %d, no restart", got.Pid, got.Restarts, st.Pid)
	}
	if err := s.Suspend(Key{Project: "none", Worktree: "x", Service: "y"}); err != nil {
		t.Errorf("suspend of an unknown service: %v; want nil", err)
	}
}
