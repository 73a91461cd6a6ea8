package world

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
)

// told is a Progress that hands on each line it is told, and whose caller
// leaves when leave is closed.
type told struct {
	NoProgress
	lines chan string
	leave chan struct{}
}

func newTold() *told { return &told{lines: make(chan string, 10), leave: make(chan struct{})} }

func (p *told) Progress(step, _, msg string) { p.lines <- step + ": " + msg }
func (p *told) Gone() <-chan struct{}        { return p.leave }

var _ Progress = (*told)(nil)

// TestLockWorld: an op finds its world and takes the world's lock
// (lockWorld). A free world is locked at once, held by the op; an op that
// waits is told what holds the lock and then reads the record again, so
// it sees what the holder left, or that the holder removed the world; a
// caller that leaves while it waits goes without the lock; an unknown
// name is Find's refusal. An engine built without the daemon's side runs
// on the no-ops.
func TestLockWorld(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Open(ctx, filepath.Join(t.TempDir(), registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	e := New(Options{Home: t.TempDir(), Logger: hclog.NewNullLogger(), Registry: reg})
	defer e.sup.Shutdown()
	if _, ok := e.events.(NoEvents); !ok {
		t.Errorf("events of an engine built without them = %T; want NoEvents", e.events)
	}
	if _, ok := e.routes.(NoRoutes); !ok {
		t.Errorf("routes of an engine built without them = %T; want NoRoutes", e.routes)
	}
	if e.adm != nil {
		t.Errorf("admission of an engine built without it = %v; want none (every world admitted at once)", e.adm)
	}
	ref := api.WorldRef{Name: "feat-a", Project: "acme"}

	tests := []struct {
		name  string
		held  bool                            // another op holds the lock when the op asks
		while func(*registry.Worktree, *told) // done while the op waits
		state state.World                     // the record the op gets
		code  string                          // else its error's code and message
		msg   string
	}{
		{name: "free", state: state.WorldUp},
		{name: "waits and reads again", held: true, state: state.WorldDown,
			while: func(rec *registry.Worktree, _ *told) {
				if err := reg.SetWorktreeState(ctx, rec.ID, state.WorldDown); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "removed meanwhile", held: true, code: api.CodeNotFound, msg: "world feat-a was removed meanwhile",
			while: func(rec *registry.Worktree, _ *told) {
				if err := reg.DeleteWorktree(ctx, rec.ID); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "caller leaves", held: true, code: api.CodeConflict, msg: "stopped waiting for the up of feat-a started",
			while: func(_ *registry.Worktree, p *told) { close(p.leave) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "feat-a", Branch: "feat/a", Path: "/src/acme.wt/feat-a", Repo: "/src/acme", State: state.WorldUp})
			if err != nil {
				t.Fatal(err)
			}
			l := e.WorldLock("acme", "feat-a")
			if tt.held && !l.TryLock("up", "feat-a") {
				t.Fatal("the world's lock is held before the op")
			}
			p := newTold()
			type got struct {
				rec    *registry.Worktree
				unlock func()
				err    error
			}
			done := make(chan got, 1)
			go func() {
				r, unlock, err := e.lockWorld(ctx, p, "down", ref)
				done <- got{r, unlock, err}
			}()
			if tt.held {
				if line := within(t, "the waiter told", p.lines); !strings.HasPrefix(line, "lock: waiting for the up of feat-a started") {
					t.Errorf("waiter told %q; want the holder named", line)
				}
				tt.while(rec, p)
				if tt.code != api.CodeConflict {
					l.Unlock()
				}
			}
			g := within(t, "lockWorld returning", done)
			if tt.code != "" {
				var ae *api.Error
				if !errors.As(g.err, &ae) || ae.Code != tt.code || !strings.Contains(ae.Message, tt.msg) {
					t.Fatalf("lockWorld: %v; want %s %q", g.err, tt.code, tt.msg)
				}
				if tt.code == api.CodeConflict {
					if h, _ := l.Holder(); h.Op != "up" {
						t.Errorf("lock held by %q after the waiter left; want still up's", h.Op)
					}
					l.Unlock()
				}
				if _, held := l.Holder(); held {
					t.Error("the lock is held after a refused lockWorld")
				}
				return
			}
			if g.err != nil {
				t.Fatalf("lockWorld: %v", g.err)
			}
			if g.rec.State != tt.state {
				t.Errorf("record state %q; want %q", g.rec.State, tt.state)
			}
			if h, held := l.Holder(); !held || h.Op != "down" || h.What != "feat-a" {
				t.Errorf("lock holder %+v (held %v); want down of feat-a", h, held)
			}
			g.unlock()
			if _, held := l.Holder(); held {
				t.Error("the lock is held after unlock")
			}
		})
	}

	_, _, err = e.lockWorld(ctx, newTold(), "down", api.WorldRef{Name: "nope", Project: "acme"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		t.Errorf("lockWorld of an unknown world: %v; want not_found", err)
	}
}
