//go:build windows

package ctl

import (
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/safefile"
)

// lockState on Windows, where the daemon's lock is its pid file (see
// host/daemon lock_windows.go): held while the process daemon.pid names
// is alive.
func lockState(home string) (held bool, pid int, known bool, err error) {
	b, rerr := safefile.ReadRegular(filepath.Join(home, PidName), 64)
	if rerr != nil {
		return false, 0, true, nil
	}
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		return false, 0, true, nil
	}
	return alive(pid), pid, true, nil
}

// alive reports whether the process pid is still running.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}
