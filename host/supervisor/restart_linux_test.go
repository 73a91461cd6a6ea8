//go:build linux

package supervisor

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/state"
)

func pidAlive(pid int) bool {
	s, err := readStat(pid)
	return err == nil && !s.dead()
}

func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

func TestCrashLoopGivesUpAfterExactSpawnCount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Policy: fastPolicy})
	spec := w.spec("api", `echo run >> spawns; echo "crashing $(wc -l < spawns)"; exit 3`)
	ctx := context.Background()
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventFailed, spec.Key, 1)
	st, _ := s.State(spec.Key)
	if got := len(lines(t, w.path("spawns"))); got != 5 {
		t.Errorf("spawns = %d; want 5", got)
	}
	if st.State != state.ServiceFailed || st.Pid != 0 || st.Restarts != 4 {
		t.Errorf("status = %s pid %d restarts %d; want failed, pid 0, 4 restarts", st.State, st.Pid, st.Restarts)
	}
	rec.mu.Lock()
	failed := rec.find(EventFailed, spec.Key)[0]
	exits, starts := len(rec.exits[spec.Key]), len(rec.started)
	restarting := rec.find(EventRestarting, spec.Key)
	rec.mu.Unlock()
	if failed.ExitCode != 3 || failed.Attempt != 5 {
		t.Errorf("service_failed exit code %d attempt %d; want 3, 5", failed.ExitCode, failed.Attempt)
	}
	if n := len(failed.LogTail); n == 0 || !containsLine(failed.LogTail, "crashing 5") {
		t.Errorf("service_failed log tail = %q; want it to hold the last run's output", failed.LogTail)
	}
	if exits != 5 || starts != 5 {
		t.Errorf("recorded %d starts, %d exits; want 5 and 5", starts, exits)
	}
	var delays []time.Duration
	for _, ev := range restarting {
		delays = append(delays, ev.Delay)
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if len(delays) != len(want) || delays[0] != want[0] || delays[1] != want[1] || delays[2] != want[2] || delays[3] != want[3] {
		t.Errorf("backoff delays = %v; want %v", delays, want)
	}

	// Start again (binky up) restarts it fresh: five more spawns.
	if err := s.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventFailed, spec.Key, 2)
	if got := len(lines(t, w.path("spawns"))); got != 10 {
		t.Errorf("spawns after a fresh start = %d; want 10", got)
	}
}

func TestStableRunResetsBackoff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	policy := Policy{Base: time.Millisecond, Cap: 4 * time.Millisecond, Stable: 300 * time.Millisecond, GiveUpAfter: 3}
	s := newSup(t, rec, Options{Policy: policy})
	// The third run outlives the stable window; the others crash at once.
	spec := w.spec("worker", `echo run >> spawns; n=$(wc -l < spawns); if [ "$n" -eq 3 ]; then sleep 1.5; fi; exit 1`)
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventFailed, spec.Key, 1)
	// Without the reset the third exit would be the third failure: give up
	// after 3 spawns. With it the count restarts: 2 + 1 + 2 = 5 spawns.
	if got := len(lines(t, w.path("spawns"))); got != 5 {
		t.Errorf("spawns = %d; want 5", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var attempts []int
	for _, ev := range rec.find(EventRestarting, spec.Key) {
		attempts = append(attempts, ev.Attempt)
	}
	if want := []int{1, 2, 1, 2}; !equalInts(attempts, want) {
		t.Errorf("restart attempts = %v; want %v", attempts, want)
	}
}

func TestRestartPolicies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		restart   Restart
		command   string
		wantState state.Service
		wantRuns  int
	}{
		{RestartNever, "exit 2", state.ServiceFailed, 1},
		{RestartNever, "exit 0", state.ServiceExited, 1},
		{RestartOnFailure, "exit 0", state.ServiceExited, 1},
		{RestartOnFailure, "exit 2", state.ServiceFailed, 5},
		{RestartOnFailure, "kill -9 $$", state.ServiceFailed, 5},
		{RestartAlways, "exit 0", state.ServiceFailed, 5},
	}
	for _, tt := range tests {
		t.Run(string(tt.restart)+" "+tt.command, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			rec := newRecorder()
			s := newSup(t, rec, Options{Policy: fastPolicy})
			spec := w.spec("svc", "echo run >> runs; "+tt.command)
			spec.Restart = tt.restart
			if err := s.Start(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
			rec.until(t, "the runner to finish", func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return !s.units[spec.Key].active
			})
			st, _ := s.State(spec.Key)
			if got := len(lines(t, w.path("runs"))); st.State != tt.wantState || got != tt.wantRuns {
				t.Errorf("state %s after %d runs; want %s after %d", st.State, got, tt.wantState, tt.wantRuns)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{})
	bad := func(f func(*Spec)) Spec {
		sp := w.spec("svc", "true")
		f(&sp)
		return sp
	}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"empty command", bad(func(s *Spec) { s.Command = "" }), "command is empty"},
		{"bad restart", bad(func(s *Spec) { s.Restart = "sometimes" }), `restart policy "sometimes"`},
		{"bad signal", bad(func(s *Spec) { s.StopSignal = "SIGNOPE" }), `stop signal "SIGNOPE"`},
		{"bad glob", bad(func(s *Spec) { s.Watch = []string{"web/[a"} }), `watch glob "web/[a"`},
		{"two probes", bad(func(s *Spec) { s.Health = &health.Probe{HTTP: "http://x", Exec: "true"} }), "more than one"},
		{"missing dir", bad(func(s *Spec) { s.Dir = w.path("nope") }), "start " + w.project + "/wt/svc: working directory "},
	}
	for _, tt := range tests {
		err := s.Start(context.Background(), tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Start = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestStartIsIdempotentWhileRunning(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("svc", "echo run >> runs; exec sleep 300")
	for range 3 {
		if err := s.Start(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	starts := len(rec.started)
	rec.mu.Unlock()
	if starts != 1 {
		t.Errorf("processes started = %d; want 1", starts)
	}
}

func TestHealthFailureCarriesLogTail(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := w.spec("api", `i=1; while [ $i -le 30 ]; do echo "line $i"; i=$((i+1)); done; exec sleep 300`)
	spec.Health = &health.Probe{TCP: "127.0.0.1:1", Interval: 20 * time.Millisecond, Timeout: 400 * time.Millisecond}
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	err := s.WaitHealthy(context.Background(), spec.Key)
	var herr *HealthError
	if !errors.As(err, &herr) {
		t.Fatalf("WaitHealthy = %v; want a *HealthError", err)
	}
	if len(herr.LogTail) != 20 || herr.LogTail[0] != "line 11" || herr.LogTail[19] != "line 30" {
		t.Errorf("log tail = %q; want line 11 … line 30", herr.LogTail)
	}
	msg := err.Error()
	for _, want := range []string{spec.Key.String(), "tcp 127.0.0.1:1", "refused", "after 400ms", "line 30"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	rec.waitEvent(t, EventUnhealthy, spec.Key, 1)
	if st, _ := s.State(spec.Key); st.State != state.ServiceUnhealthy {
		t.Errorf("state = %s; want unhealthy", st.State)
	}
}

func TestHealthPassesAndDeathFailsFast(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Policy: fastPolicy})

	ok := w.spec("ok", `sleep 0.2; touch ready; exec sleep 300`)
	ok.Health = &health.Probe{Exec: "test -e ready", Dir: w.dir, Interval: 20 * time.Millisecond, Timeout: hang}
	if err := s.Start(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State(ok.Key); st.State != state.ServiceStarting {
		t.Errorf("state before the probe passed = %s; want starting", st.State)
	}
	if err := s.WaitHealthy(context.Background(), ok.Key); err != nil {
		t.Fatalf("WaitHealthy = %v; want nil", err)
	}
	rec.waitEvent(t, EventHealthy, ok.Key, 1)
	if st, _ := s.State(ok.Key); st.State != state.ServiceRunning {
		t.Errorf("state = %s; want running", st.State)
	}

	dying := w.spec("dying", `echo "cannot bind"; exit 4`)
	dying.Restart = RestartNever
	dying.Health = &health.Probe{TCP: "127.0.0.1:1", Interval: 20 * time.Millisecond, Timeout: time.Hour}
	if err := s.Start(context.Background(), dying); err != nil {
		t.Fatal(err)
	}
	err := s.WaitHealthy(context.Background(), dying.Key)
	var herr *HealthError
	if !errors.Is(err, health.ErrExited) || !errors.As(err, &herr) || !containsLine(herr.LogTail, "cannot bind") {
		t.Errorf("WaitHealthy = %v; want ErrExited with the log tail", err)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
