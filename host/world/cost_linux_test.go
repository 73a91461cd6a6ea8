//go:build linux

package world

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// allocEnv makes the test binary a process that allocates and touches
// 64 MiB, then waits to be stopped (TestHelperAlloc).
const allocEnv = "BINKY_WORLD_TEST_ALLOC"

const allocBytes = 64 << 20

// TestHelperAlloc is not a test: TestCostOfAWorld runs it as a service.
func TestHelperAlloc(t *testing.T) {
	if os.Getenv(allocEnv) == "" {
		t.Skip("a helper process, run by TestCostOfAWorld")
	}
	b := make([]byte, allocBytes)
	for i := 0; i < len(b); i += 4096 {
		b[i] = byte(i)
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
	_ = b[len(b)-1]
	os.Exit(0)
}

// TestCostOfAWorld: a world whose service holds 64 MiB shows at least
// that much resident memory from its processes, and, once measured in
// the background, its slice's size (less its shared bytes) and its
// worktree's untracked and ignored files.
func TestCostOfAWorld(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, `
[project]
name = "fx"
port_range = PORTRANGE

[services.db]
adapter = "fake"
config = { bytes = 3000000 }

[services.hog]
cmd = 'exec "$HOG" -test.run=^TestHelperAlloc$'
env = { BINKY_WORLD_TEST_ALLOC = "1" }
`)
	f.env["HOG"] = exe
	ctx := context.Background()
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.wt, "notes.txt"), strings.Repeat("n", 1000))
	f.write(filepath.Join(f.wt, ".gitignore"), "build/\n")
	if err := os.MkdirAll(filepath.Join(f.wt, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.wt, "build", "out.bin"), strings.Repeat("b", 5000))

	var c *api.Cost
	f.waitFor("the hog to be resident and the background measures", func() bool {
		res, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref()})
		if err != nil {
			t.Fatal(err)
		}
		c = res.Worlds[0].Cost
		return c != nil && c.RSS >= allocBytes && c.Disk != nil && len(c.Slices) == 1
	})
	if c.RSS > allocBytes+64<<20 {
		t.Errorf("rss = %d; want about %d (64 MiB and a Go runtime)", c.RSS, allocBytes)
	}
	if c.Source != "processes" && c.Source != "cgroup" {
		t.Errorf("source = %q; want processes or cgroup", c.Source)
	}
	if c.Processes < 1 {
		t.Errorf("processes = %d; want at least 1", c.Processes)
	}
	if s := c.Slices[0]; s.Service != "db" || s.Bytes != 3000000 || s.Shared != 750000 {
		t.Errorf("slice = %+v; want db, 3000000 bytes, 750000 shared", s)
	}
	if c.SliceBytes != 2250000 {
		t.Errorf("slice bytes = %d; want 2250000 (shared blocks counted once, with their source)", c.SliceBytes)
	}
	// .gitignore (7 bytes) and notes.txt are untracked; build/ is ignored.
	if d := c.Disk; d.Untracked != 1007 || d.Ignored != 5000 || d.Files != 3 {
		t.Errorf("disk = %+v; want 1007 untracked, 5000 ignored, 3 files", d)
	}
}
