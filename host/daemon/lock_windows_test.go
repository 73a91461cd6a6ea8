//go:build windows

package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLockFileWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.pid")
	// A pid file left by a dead daemon names a pid some other process may
	// have now; without a lock behind it, it is stale.
	if err := os.WriteFile(path, []byte("56\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := lockFile(path)
	if err != nil {
		t.Fatalf("lock over a stale pid file: %v", err)
	}
	_, err = lockFile(path)
	var re *RunningError
	if !errors.As(err, &re) || re.Pid != os.Getpid() {
		t.Fatalf("second lock = %v; want a RunningError naming pid %d", err, os.Getpid())
	}
	f.Close()
	g, err := lockFile(path)
	if err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
	g.Close()
}
