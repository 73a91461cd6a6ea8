//go:build !windows

package world

import (
	"context"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

// TestEngineFreshUp: the first up of a worktree provisions its slice once
// and starts every cmd service.
func TestEngineFreshUp(t *testing.T) {
	f := newFixture(t, fixtureWorld)
	w, err := f.up(context.Background(), f.upArgs())
	if err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	t.Logf("%+v", w)
	f.wantState(state.WorldUp)
	pids := f.pids()
	f.wantAlive(pids, "api", "web", "side")
	f.wantCalls("provision fx_feat", "resolve fx_feat")
	t.Log(f.fa.sliceNames(), f.fd.eventNames())
}
