//go:build !windows

package ctl

import (
	"os/exec"
	"syscall"
)

// startDetached starts the daemon in its own session so it outlives the
// terminal.
func startDetached(cmd *exec.Cmd) (*exec.Cmd, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}
