//go:build linux

package world

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/internal/gittest"
	"github.com/binkyhq/binky/internal/testroot"
)

// Issue 40 item 1: remove --force always ends with the world gone and a
// list of what it left. A worktree git cannot delete (here a file made
// immutable with chattr) no longer stops it: the slices are destroyed,
// the world forgotten, and the worktree named among what was left.
func TestRemoveForceGoesPastAWorktreeThatWillNotGo(t *testing.T) {
	testroot.Need(t, "chattr +i makes a file git cannot delete")
	gittest.Isolate(t)
	f := newFixture(t, fixtureWorld)
	ctx := context.Background()
	upFirst(t, f)
	stuck := filepath.Join(f.wt, "stuck")
	f.write(stuck, "x")
	if out, err := exec.Command("chattr", "+i", stuck).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s (a file system without immutable files)", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", stuck).Run(); os.RemoveAll(f.wt) })

	w, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), Force: true, RemoveWorktree: true})
	if err != nil {
		t.Fatalf("remove --force with a worktree git cannot delete: %v\n%s", err, f.said)
	}
	if f.record() != nil {
		t.Errorf("the world is still recorded after remove --force")
	}
	if left := strings.Join(w.Left, "\n"); !strings.Contains(left, "worktree "+f.wt) {
		t.Errorf("remove --force left %q; want the worktree named", w.Left)
	}
	if got := f.fa.sliceNames(); len(got) != 0 {
		t.Errorf("slices left on the fake server: %v; want none", got)
	}
}
