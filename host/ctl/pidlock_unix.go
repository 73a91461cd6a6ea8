//go:build !windows

package ctl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/binkyhq/binky/host/safefile"
)

// lockState reports whether a process holds home's daemon.pid lock
// (held), and the pid the file names (0 when it names none). known is
// false when it could not look without risk: a daemon start is under way
// (daemon.start.lock is held), and the new daemon's own try for the lock
// could meet this look and fail. Looking takes a shared lock for an
// instant; under the start lock no daemon started by ctl can be trying.
func lockState(home string) (held bool, pid int, known bool, err error) {
	path := filepath.Join(home, PidName)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, 0, true, nil // no daemon ever ran here
	}
	unlock, busy := tryStartLock(home)
	if busy {
		return false, readPid(home), false, nil
	}
	defer unlock()
	f, err := safefile.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, true, nil
	}
	if err != nil {
		return false, 0, true, fmt.Errorf("look at the daemon's lock: %w", err)
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64))
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false, pid, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, pid, true, nil
	}
	return false, pid, true, fmt.Errorf("look at the daemon's lock %s: %w", path, err)
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
