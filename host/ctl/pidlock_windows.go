//go:build windows

package ctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/internal/winlock"
	"github.com/binkyhq/binky/host/safefile"
)

// lockState reports whether a process holds home's daemon.pid lock (a
// LockFileEx lock, host/daemon lock_windows.go), and the pid the file
// names. As on Unix, it looks only outside a daemon start (known is false
// during one), taking a shared lock for an instant. A pid file without a
// lock behind it is not held, whichever process has that pid now.
func lockState(home string) (held bool, pid int, known bool, err error) {
	path := filepath.Join(home, PidName)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, 0, true, nil
	}
	unlock, busy := tryStartLock(home)
	if busy {
		return false, readPid(home), false, nil
	}
	defer unlock()
	pid = readPid(home)
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, true, nil
	}
	if err != nil {
		return false, pid, true, fmt.Errorf("look at the daemon's lock: %w", err)
	}
	defer f.Close()
	ok, err := winlock.TryLock(f, false)
	switch {
	case err != nil:
		return false, pid, true, fmt.Errorf("look at the daemon's lock %s: %w", path, err)
	case ok:
		winlock.Unlock(f)
		return false, pid, true, nil
	}
	return true, pid, true, nil
}

// readPid is the pid daemon.pid names, or 0.
func readPid(home string) int {
	b, err := safefile.ReadRegular(filepath.Join(home, PidName), 64)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return max(pid, 0)
}
