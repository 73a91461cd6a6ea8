//go:build linux

package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCgroupsPrune: at daemon exit the home's empty cgroups go, the root
// with them; a world's cgroup that still holds a process stays, and so
// does the root above it.
func TestCgroupsPrune(t *testing.T) {
	c, err := OpenCgroups("test-prune-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no writable cgroup v2 here: %v (CI runs as root on a machine with cgroup v2)", err)
		}
		t.Skipf("no writable cgroup v2 here: %v", err)
	}
	t.Cleanup(func() { c.Prune() })
	for _, w := range []string{"a", "b"} {
		f, err := c.open("proj", w)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// A process in world b's cgroup.
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); c.Prune() })
	if err := os.WriteFile(filepath.Join(c.dir("proj", "b"), "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Prune()
	if _, err := os.Stat(c.dir("proj", "a")); !os.IsNotExist(err) {
		t.Errorf("empty cgroup proj/a kept: %v", err)
	}
	if _, err := os.Stat(c.dir("proj", "b")); err != nil {
		t.Errorf("cgroup proj/b holding pid %d was removed: %v", cmd.Process.Pid, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	c.Prune()
	if _, err := os.Stat(c.Root()); !os.IsNotExist(err) {
		t.Errorf("the home's cgroup root is kept once empty: %v", err)
	}
}
