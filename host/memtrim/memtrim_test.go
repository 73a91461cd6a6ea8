package memtrim

import (
	"github.com/binkyhq/binky/internal/wine"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

func TestIdleTrimsOncePerQuietSpell(t *testing.T) {
	wine.Skip(t, "fails under Wine, not yet diagnosed (a clock reading)")
	n := 0
	var proxyLast time.Time
	i := NewIdle(time.Minute, func() { n++ }, func() time.Time { return proxyLast })
	t0 := time.Now()
	if i.Check(t0) {
		t.Fatal("trimmed before a quiet minute passed")
	}
	if !i.Check(t0.Add(2*time.Minute)) || n != 1 {
		t.Fatalf("no trim after a quiet spell (n=%d)", n)
	}
	if i.Check(t0.Add(10*time.Minute)) || n != 1 {
		t.Fatalf("trimmed again with nothing done since (n=%d)", n)
	}

	// A call in flight holds the trim off however long it takes.
	i.Begin()
	if i.Check(time.Now().Add(time.Hour)) {
		t.Fatal("trimmed while a call was in flight")
	}
	i.End()
	if !i.Check(time.Now().Add(2*time.Minute)) || n != 2 {
		t.Fatalf("no trim after the call ended and a quiet spell passed (n=%d)", n)
	}

	// Activity reported by extra (the proxy) counts too.
	proxyLast = time.Now().Add(5 * time.Minute)
	if i.Check(time.Now().Add(5*time.Minute + 30*time.Second)) {
		t.Fatal("trimmed 30s after a proxied request")
	}
	if !i.Check(time.Now().Add(7*time.Minute)) || n != 3 {
		t.Fatalf("no trim once the proxy went quiet (n=%d)", n)
	}
}

func TestPacerRaisesGOGCWhileBusy(t *testing.T) {
	// The pacer leaves a GOGC or GOMEMLIMIT from the environment alone;
	// here it must act, whatever the environment running the test says.
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	var n uint64
	p := &Pacer{Count: func() uint64 { return n }, BusyRate: 100, BusyPercent: 321, QuietFor: 3 * time.Second}
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	t0 := time.Now()
	p.Check(t0)
	n += 50 // 50 a second: quiet
	if p.Check(t0.Add(time.Second)) {
		t.Fatal("busy at half the busy rate")
	}
	n += 1000
	if !p.Check(t0.Add(2 * time.Second)) {
		t.Fatal("not busy at ten times the busy rate")
	}
	if got := debug.SetGCPercent(-1); got != 321 {
		debug.SetGCPercent(before)
		t.Fatalf("GOGC while busy = %d, want 321", got)
	}
	debug.SetGCPercent(321)
	// Quiet for less than QuietFor: still busy; then back to the start.
	if !p.Check(t0.Add(3*time.Second)) || !p.Check(t0.Add(5*time.Second)) {
		t.Fatal("left busy before QuietFor passed")
	}
	if p.Check(t0.Add(7 * time.Second)) {
		t.Fatal("still busy after QuietFor of quiet")
	}
	if got := debug.SetGCPercent(-1); got != before {
		t.Fatalf("GOGC after the busy spell = %d, want %d as before", got, before)
	}
	debug.SetGCPercent(before)
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Fatalf("memory limit after the busy spell = %d, want none", lim)
	}
}
