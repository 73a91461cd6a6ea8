package ctl

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// DaemonName is the binary that runs the daemon and binky's heavy verbs
// (MCP, adapters, certificates); binky hands those off to it.
const DaemonName = "binkyd"

// DaemonBinary finds binkyd: next to exe (the running binky or binkyd, from
// os.Executable) first, then on PATH. The error names both places.
func DaemonBinary(exe string) (string, error) {
	name := DaemonName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	beside := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
		return beside, nil
	}
	if p, err := exec.LookPath(DaemonName); err == nil {
		return p, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("find %s on PATH: %w", DaemonName, err)
	}
	return "", fmt.Errorf("find %s: not next to %s (%s) nor on PATH; install it beside binky (make install puts both in one directory)", DaemonName, exe, beside)
}
