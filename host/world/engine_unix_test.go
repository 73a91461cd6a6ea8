//go:build !windows

package world

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
	"github.com/binkyhq/binky/sdk"
)

// engineCase is one engine operation run in-process on the fixture world
// (fixtureWorld: slice db ← api ← web, and side on its own).
type engineCase struct {
	name string
	// before brings the world to where the operation starts (nil: a
	// worktree that never had a world). The adapter calls it makes are
	// not checked.
	before func(t *testing.T, f *fixture)
	op     func(ctx context.Context, f *fixture) (*api.World, error)

	wantErr string   // a part of the operation's error; "": it succeeds
	calls   []string // the adapter calls the operation makes, in order ("verb slice")
	state   state.World
	gone    bool     // the world is forgotten
	live    []string // the services running afterwards
	kept    []string // of live, those still running the process they ran before
	slices  []string // the slices the fake adapter's servers hold afterwards
	check   func(t *testing.T, f *fixture, w *api.World)
}

func upOp(ctx context.Context, f *fixture) (*api.World, error) { return f.up(ctx, f.upArgs()) }

// upFirst brings the world up, failing the test if it does not come up.
func upFirst(t *testing.T, f *fixture) {
	t.Helper()
	if _, err := upOp(context.Background(), f); err != nil {
		t.Fatalf("the first up: %v\n%s", err, f.said)
	}
}

var everyService = []string{"api", "side", "web"}

// TestEngineOps runs each engine operation on a world in-process and checks
// what it asked of the adapter, which processes it left and how it
// recorded the world.
func TestEngineOps(t *testing.T) {
	refused := sdk.Target{Slice: "fx_feat", Owner: "aaaa000011112222"}.CheckClaim(`slice "fx_feat"`,
		sdk.Target{Owner: "bbbb333344445555", OwnerLabel: "/home/bob/.binky uid 1001"}.Claim())
	cases := []engineCase{
		{
			name:   "fresh up",
			op:     upOp,
			calls:  []string{"provision fx_feat", "resolve fx_feat"},
			state:  state.WorldUp,
			live:   everyService,
			slices: []string{"fx_feat"},
			check: func(t *testing.T, f *fixture, w *api.World) {
				if w.Worktree != "feat" || w.Noop {
					t.Errorf("up answered world %q noop %v; want feat, not a noop", w.Worktree, w.Noop)
				}
				if got := f.fa.sliceConfig("fx_feat"); got["size"] != "small" {
					t.Errorf("slice fx_feat was provisioned with config %v; want binky.toml's size = small", got)
				}
				if ev := f.fd.eventNames(); !slices.Contains(ev, "up_done") || !slices.Contains(ev, "slice_provisioned") {
					t.Errorf("events = %q; want slice_provisioned and up_done", ev)
				}
			},
		},
		{
			name:   "up with nothing to do",
			before: upFirst,
			op:     upOp,
			state:  state.WorldUp,
			live:   everyService,
			kept:   everyService,
			slices: []string{"fx_feat"},
			check: func(t *testing.T, f *fixture, w *api.World) {
				if !w.Noop {
					t.Errorf("up of an unchanged world is not a noop")
				}
			},
		},
		{
			name: "up after a config change",
			before: func(t *testing.T, f *fixture) {
				upFirst(t, f)
				f.editConfig("exec sleep 100701", "exec sleep 100711")
			},
			op:     upOp,
			calls:  []string{"provision fx_feat", "resolve fx_feat"},
			state:  state.WorldUp,
			live:   everyService,
			kept:   []string{"side"},
			slices: []string{"fx_feat"},
		},
		{
			name: "up after a failed up",
			before: func(t *testing.T, f *fixture) {
				f.fa.failNext("provision", 1, sdk.Errorf(sdk.CodeUnreachable, "dial tcp 127.0.0.1:5432: connection refused"))
				if _, err := upOp(context.Background(), f); err == nil || !strings.Contains(err.Error(), "connection refused") {
					t.Fatalf("up with a refused provision: %v; want its error", err)
				}
				f.wantState(state.WorldFailed)
			},
			op:     upOp,
			calls:  []string{"destroy fx_feat", "provision fx_feat", "resolve fx_feat"},
			state:  state.WorldUp,
			live:   everyService,
			slices: []string{"fx_feat"},
		},
		{
			name:   "up interrupted and resumed",
			before: interruptUp,
			op:     upOp,
			calls:  []string{"provision fx_feat", "resolve fx_feat"},
			state:  state.WorldUp,
			live:   everyService,
			// What the cut up started runs on, adopted by the next up.
			kept:   []string{"api", "side"},
			slices: []string{"fx_feat"},
		},
		{
			name:   "reset restarts dependents",
			before: upFirst,
			op: func(ctx context.Context, f *fixture) (*api.World, error) {
				return f.reset(ctx, api.ResetArgs{WorldRef: f.ref()})
			},
			calls:  []string{"destroy fx_feat", "provision fx_feat", "resolve fx_feat"},
			state:  state.WorldUp,
			live:   everyService,
			kept:   []string{"side"},
			slices: []string{"fx_feat"},
		},
		{
			name: "remove refused by a dirty worktree",
			before: func(t *testing.T, f *fixture) {
				upFirst(t, f)
				f.write(filepath.Join(f.wt, "notes.txt"), "not committed")
			},
			op: func(ctx context.Context, f *fixture) (*api.World, error) {
				return f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), RemoveWorktree: true})
			},
			wantErr: "uncommitted changes",
			state:   state.WorldUp,
			live:    everyService,
			kept:    everyService,
			slices:  []string{"fx_feat"},
			check: func(t *testing.T, f *fixture, _ *api.World) {
				if _, err := os.Stat(filepath.Join(f.wt, "notes.txt")); err != nil {
					t.Errorf("the refused remove touched the worktree: %v", err)
				}
			},
		},
		{
			name: "remove --force with a slice whose server refuses",
			before: func(t *testing.T, f *fixture) {
				upFirst(t, f)
				f.fa.failNext("destroy", -1, refused)
			},
			op: func(ctx context.Context, f *fixture) (*api.World, error) {
				return f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), Force: true})
			},
			calls:  []string{"destroy fx_feat"},
			gone:   true,
			slices: []string{"fx_feat"},
			check: func(t *testing.T, f *fixture, w *api.World) {
				said := strings.Join(w.Left, "\n")
				for _, want := range []string{"fx_feat", "belongs to another binky home", "/home/bob/.binky uid 1001"} {
					if !strings.Contains(said, want) {
						t.Errorf("remove --force left %q; want it to say %q", w.Left, want)
					}
				}
			},
		},
		{
			name:   "down",
			before: upFirst,
			op: func(ctx context.Context, f *fixture) (*api.World, error) {
				return f.down(ctx, api.DownArgs{WorldRef: f.ref()})
			},
			state:  state.WorldDown,
			slices: []string{"fx_feat"},
		},
		{
			name:   "restart",
			before: upFirst,
			op: func(ctx context.Context, f *fixture) (*api.World, error) {
				return f.restart(ctx, api.RestartArgs{WorldRef: f.ref()})
			},
			state:  state.WorldUp,
			live:   everyService,
			slices: []string{"fx_feat"},
		},
	}
	gittest.Isolate(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runEngineCase(t, c)
		})
	}
}

func runEngineCase(t *testing.T, c engineCase) {
	f := newFixture(t, fixtureWorld)
	if c.before != nil {
		c.before(t, f)
	}
	before := f.pids()
	f.fa.takeCalls()

	w, err := c.op(context.Background(), f)
	switch {
	case c.wantErr == "" && err != nil:
		t.Fatalf("%s: %v\n%s", c.name, err, f.said)
	case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
		t.Fatalf("%s: error %v; want one saying %q", c.name, err, c.wantErr)
	}

	f.wantCalls(c.calls...)
	if got := f.fa.sliceNames(); !slices.Equal(got, c.slices) {
		t.Errorf("slices on the servers = %q; want %q", got, c.slices)
	}
	if c.gone {
		if rec := f.record(); rec != nil {
			t.Errorf("world still recorded (state %s); want it forgotten", rec.State)
		}
	} else {
		f.wantState(c.state)
	}
	after := f.pids()
	f.wantAlive(after, c.live...)
	for _, n := range c.live {
		old, now := before[n], after[n]
		switch {
		case slices.Contains(c.kept, n) && now != old:
			t.Errorf("service %s: pid %d became %d; want it kept", n, old, now)
		case !slices.Contains(c.kept, n) && old > 0 && now == old:
			t.Errorf("service %s: still pid %d; want it restarted", n, old)
		}
	}
	live := map[string]int{}
	for _, n := range c.live {
		live[n] = after[n]
	}
	f.wantOnlyLive(live)
	if c.check != nil {
		c.check(t, f, w)
	}
}

// interruptUp starts an up, cancels it while it waits for the api's
// health, and checks it stopped leaving its intent recorded.
func interruptUp(t *testing.T, f *fixture) {
	f.holdHealth()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := upOp(ctx, f)
		done <- err
	}()
	probed := filepath.Join(f.hold, "probed-api")
	f.waitFor("the api's health probe", func() bool { _, err := os.Stat(probed); return err == nil })
	f.pids() // note the api started by the cut up
	cancel()
	var err error
	f.waitFor("the cut up to return", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil {
		t.Fatal("an up cancelled while it waited for health succeeded")
	}
	// The cut up records why it failed (with a context of its own: the
	// op's is cancelled), and the next up finishes the world.
	if strings.Contains(err.Error(), "recording the failure failed") {
		t.Errorf("the cut up could not record its failure: %v", err)
	}
	rec := f.record()
	if rec == nil || rec.State != state.WorldFailed {
		t.Fatalf("the cut up left the world recorded as %+v; want failed", rec)
	}
	f.release()
}

// TestStalledUpFreezesNothing: a caller that stops reading during up (a
// Ctrl-Z'd terminal, a paused MCP client) loses its stream; the up goes on
// and gives the world's lock back, so another caller's down of the same
// world completes, and nothing of the world is left running (issue 38).
func TestStalledUpFreezesNothing(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, fixtureWorld)
	upFirst(t, f)
	f.editConfig("exec sleep 100702", "exec sleep 100704") // web restarts: up has work to report

	// The stalled caller: a connection nobody reads. Each frame waits at
	// most FrameWait, then the stream gives up on the caller.
	caller, never := net.Pipe()
	defer never.Close()
	stalled := NewStream(caller, nil)
	upDone := make(chan error, 1)
	go func() {
		_, err := f.e.Up(ctx, f.upArgs(), stalled)
		upDone <- err
	}()
	f.waitFor("the up to hold the world", func() bool {
		_, held := f.e.WorldLock("fx", "feat").Holder()
		return held
	})

	downDone := make(chan error, 1)
	go func() {
		_, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()})
		downDone <- err
	}()
	select {
	case err := <-downDone:
		if err != nil {
			t.Fatalf("down beside a stalled up: %v\n%s", err, f.said)
		}
	case <-time.After(waitBound):
		t.Fatalf("down waited %s behind an up whose caller stopped reading", waitBound)
	}
	select {
	case <-upDone: // its result went nowhere; it ended all the same
	case <-time.After(waitBound):
		t.Fatalf("the up of a stalled caller did not end within %s", waitBound)
	}
	if !stalled.Stalled() {
		t.Error("the stream of a caller that read nothing is not marked stalled")
	}
	f.wantState(state.WorldDown)
	for name, pid := range f.pids() {
		if pid > 0 && alive(pid) {
			t.Errorf("%s (pid %d) runs after down", name, pid)
		}
	}
	f.wantOnlyLive(nil)
}
