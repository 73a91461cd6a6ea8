//go:build !windows

package world

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// warmWorld is a world whose [worktree] table is body, rooted in a fresh
// directory.
func warmWorld(t *testing.T, body string) (*Engine, *Stream, *world, *registry.Worktree) {
	t.Helper()
	cfg := parse(t, "[project]\nname = \"acme\"\n\n[services.api]\ncmd = \"run\"\nports = [\"http\"]\n\n[worktree]\n"+body)
	path := t.TempDir()
	plan, _ := portPlan(cfg, 20000)
	w := &world{cfg: cfg, project: "acme", worktree: "wt", path: path, plan: plan,
		slices: map[string]slice{}, caller: map[string]string{"PATH": os.Getenv("PATH")}}
	rec := &registry.Worktree{Project: "acme", Name: "wt", Path: path}
	s := NewStream(io.Discard, nil)
	return &Engine{home: t.TempDir(), redact: redact.New()}, s, w, rec
}

func runs(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestWarmSetupRunsOnInputChange: setup runs in a new worktree, not again
// on the next up, and again once its input's content changes; it renders
// tokens and sees the world's coordinates; its output goes to setup.log.
func TestWarmSetupRunsOnInputChange(t *testing.T) {
	d, s, w, rec := warmWorld(t, `setup = ["echo \"${worktree.name} ${api.port} $BINKY_WORKTREE\" >> runs"]
inputs = ["lock.txt"]
`)
	os.WriteFile(filepath.Join(rec.Path, "lock.txt"), []byte("v1"), 0o644)
	for i, want := range []int{1, 1} {
		if err := d.warmWorktree(t.Context(), s, w, rec); err != nil {
			t.Fatalf("up %d: %v", i+1, err)
		}
		if got := runs(t, rec.Path); got != want {
			t.Fatalf("after up %d setup ran %d times; want %d", i+1, got, want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(rec.Path, "runs"))
	if got := strings.TrimSpace(string(b)); got != "wt 20000 wt" {
		t.Errorf("setup wrote %q; want \"wt 20000 wt\" (tokens and BINKY_WORKTREE)", got)
	}
	os.WriteFile(filepath.Join(rec.Path, "lock.txt"), []byte("v2"), 0o644)
	if err := d.warmWorktree(t.Context(), s, w, rec); err != nil {
		t.Fatal(err)
	}
	if got := runs(t, rec.Path); got != 2 {
		t.Fatalf("after the input changed setup ran %d times; want 2", got)
	}
	if log, err := os.ReadFile(filepath.Join(d.logDir("acme", "wt"), "setup.log")); err != nil || !strings.Contains(string(log), "--- binky: setup[0]") {
		t.Errorf("setup.log = %q, %v; want the runs logged", log, err)
	}
}

// TestWarmSetupFailure: a failing setup fails with the tail of its output,
// secrets redacted, and runs again on the next up (its success was never
// recorded).
func TestWarmSetupFailure(t *testing.T) {
	d, s, w, rec := warmWorld(t, `setup = ["echo try >> runs; echo installing; echo 'token hunter2 rejected' >&2; exit 3"]
`)
	d.redact.Add("hunter2")
	for i := 1; i <= 2; i++ {
		err := d.warmWorktree(t.Context(), s, w, rec)
		if err == nil {
			t.Fatalf("up %d: setup failed but warmWorktree succeeded", i)
		}
		msg := err.Error()
		for _, want := range []string{"setup of worktree wt failed", "installing", "rejected", "setup.log"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not contain %q", msg, want)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("error leaks a secret: %q", msg)
		}
		if got := runs(t, rec.Path); got != i {
			t.Fatalf("after failed up %d setup ran %d times; want %d", i, got, i)
		}
	}
	log, _ := os.ReadFile(filepath.Join(d.logDir("acme", "wt"), "setup.log"))
	if strings.Contains(string(log), "hunter2") {
		t.Errorf("setup.log leaks a secret")
	}
}

// TestWarmSetupTimeout: a setup past [worktree] timeout is stopped and
// fails the up, naming the limit.
func TestWarmSetupTimeout(t *testing.T) {
	d, s, w, rec := warmWorld(t, `setup = ["sleep 30"]
timeout = "200ms"
`)
	err := d.warmWorktree(t.Context(), s, w, rec)
	if err == nil || !strings.Contains(err.Error(), "time limit") {
		t.Fatalf("got %v; want a time-limit failure", err)
	}
}

// TestRemoveRunsTeardown: remove runs [worktree] teardown in the
// worktree before it goes; a teardown that fails stops the remove (run
// again, it runs again), and --force goes on, naming it as left (issue
// 40: what setup makes outside the worktree no longer dangles).
func TestRemoveRunsTeardown(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, `
[project]
name = "td"
port_range = PORTRANGE

[worktree]
setup    = ['echo made >> "$HOLD/outside"']
teardown = ['test ! -f "$HOLD/refuse" || exit 3', 'echo undone "$BINKY_WORKTREE" >> "$HOLD/outside"']

[services.side]
cmd = 'exec sleep 100719'
`)
	upFirst(t, f)
	f.write(filepath.Join(f.hold, "refuse"), "")
	if _, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), RemoveWorktree: true}); err == nil || !strings.Contains(err.Error(), "teardown of worktree") {
		t.Fatalf("remove with a failing teardown: %v; want it refused naming the teardown", err)
	}
	f.wantState(state.WorldRemoving)
	os.Remove(filepath.Join(f.hold, "refuse"))
	if _, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), RemoveWorktree: true}); err != nil {
		t.Fatalf("remove again: %v\n%s", err, f.said)
	}
	if got := f.count("outside"); got != 2 {
		t.Errorf("$HOLD/outside has %d lines; want setup's and teardown's", got)
	}
	if b, _ := os.ReadFile(filepath.Join(f.hold, "outside")); !strings.Contains(string(b), "undone feat") {
		t.Errorf("teardown did not run with the world's environment: %q", b)
	}
	if f.record() != nil {
		t.Error("the world is still recorded after remove")
	}
}

// TestRemoveForceGoesPastTeardown: --force removes the world all the
// same and names the teardown as left.
func TestRemoveForceGoesPastTeardown(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, `
[project]
name = "tf"
port_range = PORTRANGE

[worktree]
teardown = ['exit 4']

[services.side]
cmd = 'exec sleep 100720'
`)
	upFirst(t, f)
	w, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), Force: true, RemoveWorktree: true})
	if err != nil {
		t.Fatalf("remove --force: %v\n%s", err, f.said)
	}
	if !strings.Contains(strings.Join(w.Left, "\n"), "teardown") {
		t.Errorf("remove --force left %q; want the failed teardown named", w.Left)
	}
	if f.record() != nil {
		t.Error("the world is still recorded after remove --force")
	}
}
