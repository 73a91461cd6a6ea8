//go:build windows

package daemon

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lockFile on Windows relies on the OS refusing a second open for writing
// while the first daemon holds the file without share-write... os.OpenFile
// cannot ask for that, so an existing live pid file is taken as held.
func lockFile(path string) (*os.File, error) {
	if b, err := os.ReadFile(path); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
			if p, err := os.FindProcess(pid); err == nil && p != nil && pid != os.Getpid() {
				return nil, &RunningError{Pid: pid}
			}
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return f, nil
}
