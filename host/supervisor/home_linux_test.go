//go:build linux

package supervisor

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Two homes run a project of the same name: neither home's stray cleanup
// at start, nor its EndMarked at down, reaches the other's processes.
func TestHomesNeverEndEachOthersProcesses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := newSup(t, newRecorder(), Options{})
	b := newSup(t, newRecorder(), Options{})
	specA := w.spec("web", `echo $$ > a.pid; exec sleep 300`)
	specA.Key.Home = "aaaaaaaaaaaaaaaa"
	specB := w.spec("web", `echo $$ > b.pid; exec sleep 300`)
	specB.Key.Home = "bbbbbbbbbbbbbbbb"
	if err := a.Start(context.Background(), specA); err != nil {
		t.Fatal(err)
	}
	pidA := w.readPid(t, "a.pid")
	// Home b's start of the same project/worktree/service ends strays
	// carrying its own marker only.
	if err := b.Start(context.Background(), specB); err != nil {
		t.Fatal(err)
	}
	pidB := w.readPid(t, "b.pid")
	if !pidAlive(pidA) {
		t.Fatalf("home b's start ended home a's service (pid %d)", pidA)
	}
	if got := MarkedProcesses(WorldMarker(specA.Key.Home, w.project, "wt")); !slices.Contains(got, pidA) || slices.Contains(got, pidB) {
		t.Errorf("home a's world marker matches %v; want %d and not %d", got, pidA, pidB)
	}
	if left := EndMarked(WorldMarker(specB.Key.Home, w.project, "wt"), syscall.SIGTERM, 5*time.Second); len(left) > 0 {
		t.Fatalf("EndMarked left %v", left)
	}
	if !pidAlive(pidA) {
		t.Fatalf("home b's EndMarked ended home a's service (pid %d)", pidA)
	}
	// EndMarked stops waiting once the process carries no marker: its
	// memory (and environment) goes before it is reaped, so it may still
	// be exiting here. Poll its end; the bound only catches a process left
	// running.
	for deadline := time.Now().Add(hang); pidAlive(pidB); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("home b's EndMarked left its own service (pid %d)", pidB)
			break
		}
	}
	// A process of a binky that predates home ids (marker without a home)
	// is nobody's to end by marker.
	if got := MarkedProcesses(WorldMarker("", w.project, "wt")); len(got) != 0 {
		t.Errorf("legacy marker %q matches %v; want none", WorldMarker("", w.project, "wt"), got)
	}
}
