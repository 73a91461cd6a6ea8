//go:build windows

package daemon

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/internal/winlock"
)

// lockFile takes an exclusive, non-blocking LockFileEx lock on path
// (host/internal/winlock) and writes our pid into it; the lock is held for
// the daemon's life and goes with the process. When another daemon holds
// it, the error names that daemon's pid. A pid the file names without a
// lock behind it is stale, whatever process now has that pid.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	ok, err := winlock.TryLock(f, true)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		b, _ := os.ReadFile(path)
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return nil, &RunningError{Pid: pid}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
