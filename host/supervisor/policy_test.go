package supervisor

import (
	"testing"
	"time"

	"github.com/binkyhq/binky/host/state"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	tests := []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{4, 0, 8 * time.Second},
		{5, 0, 16 * time.Second},
		{6, 0, 30 * time.Second},
		{7, 0, 30 * time.Second},
		{1000, 0, 30 * time.Second},
		{0, 0, time.Second},
		{1, 0.5, 900 * time.Millisecond},
		{1, 0.999999, 800*time.Millisecond + 200*time.Nanosecond},
		{6, 1, 24 * time.Second},
		{2, -3, 2 * time.Second}, // out-of-range jitter is clamped
		{2, 7, 1600 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := p.Backoff(tt.attempt, tt.jitter); got != tt.want {
			t.Errorf("Backoff(%d, %v) = %v; want %v", tt.attempt, tt.jitter, got, tt.want)
		}
	}
}

func TestBackoffNeverPastCap(t *testing.T) {
	t.Parallel()
	p := Policy{Base: 3 * time.Millisecond, Cap: 10 * time.Millisecond}
	for a := 1; a < 100; a++ {
		for _, j := range []float64{0, 0.3, 0.99} {
			if got := p.Backoff(a, j); got > p.Cap || got <= 0 {
				t.Fatalf("Backoff(%d, %v) = %v; want in (0, %v]", a, j, got, p.Cap)
			}
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	crash := Exit{Pid: 1, Code: 1, RanFor: time.Second}
	clean := Exit{Pid: 1, Code: 0, RanFor: time.Second}
	signalled := Exit{Pid: 1, Code: -1, Signal: "killed", RanFor: time.Second}
	neverStarted := Exit{Code: -1, Err: "start: no such file"}
	long := Exit{Pid: 1, Code: 1, RanFor: 10 * time.Second}
	tests := []struct {
		name      string
		failures  int
		mode      Restart
		exit      Exit
		want      Decision
		wantCount int
		wantState state.Service
	}{
		{"on-failure restarts a crash", 0, RestartOnFailure, crash, Decision{Restart: true, Delay: time.Second, Attempt: 1}, 1, state.ServiceBackoff},
		{"on-failure restarts a signal", 0, RestartOnFailure, signalled, Decision{Restart: true, Delay: time.Second, Attempt: 1}, 1, state.ServiceBackoff},
		{"on-failure leaves a clean exit", 2, RestartOnFailure, clean, Decision{}, 2, state.ServiceExited},
		{"on-failure counts a failed spawn", 0, RestartOnFailure, neverStarted, Decision{Restart: true, Delay: time.Second, Attempt: 1}, 1, state.ServiceBackoff},
		{"always restarts a clean exit", 0, RestartAlways, clean, Decision{Restart: true, Delay: time.Second, Attempt: 1}, 1, state.ServiceBackoff},
		{"never leaves a crash failed", 0, RestartNever, crash, Decision{}, 0, state.ServiceFailed},
		{"never leaves a clean exit", 0, RestartNever, clean, Decision{}, 0, state.ServiceExited},
		{"third failure backs off 4s", 2, RestartOnFailure, crash, Decision{Restart: true, Delay: 4 * time.Second, Attempt: 3}, 3, state.ServiceBackoff},
		{"fifth failure gives up", 4, RestartOnFailure, crash, Decision{GiveUp: true, Attempt: 5}, 5, state.ServiceFailed},
		{"always gives up too", 4, RestartAlways, clean, Decision{GiveUp: true, Attempt: 5}, 5, state.ServiceFailed},
		{"stable run resets", 4, RestartOnFailure, long, Decision{Restart: true, Delay: time.Second, Attempt: 1}, 1, state.ServiceBackoff},
		{"stable clean run resets under never", 3, RestartNever, Exit{Pid: 1, RanFor: time.Hour}, Decision{}, 0, state.ServiceExited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, count := p.Decide(tt.failures, tt.mode, tt.exit, 0)
			if got != tt.want || count != tt.wantCount {
				t.Errorf("Decide(%d, %s, %+v) = %+v, %d; want %+v, %d", tt.failures, tt.mode, tt.exit, got, count, tt.want, tt.wantCount)
			}
			if s := stateAfter(got, tt.exit); s != tt.wantState {
				t.Errorf("stateAfter = %s; want %s", s, tt.wantState)
			}
		})
	}
}

// TestCrashLoopSchedule walks the pure machine through a crash loop: the
// spawn count before giving up is exactly GiveUpAfter, and the delays double.
func TestCrashLoopSchedule(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	failures, spawns := 0, 0
	var delays []time.Duration
	for {
		spawns++
		d, n := p.Decide(failures, RestartOnFailure, Exit{Pid: 1, Code: 2}, 0)
		failures = n
		if !d.Restart {
			if !d.GiveUp {
				t.Fatalf("Decide stopped without giving up: %+v", d)
			}
			break
		}
		delays = append(delays, d.Delay)
	}
	if spawns != 5 {
		t.Errorf("spawns = %d; want 5", spawns)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if len(delays) != len(want) {
		t.Fatalf("delays = %v; want %v", delays, want)
	}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("delays = %v; want %v", delays, want)
			break
		}
	}
}
