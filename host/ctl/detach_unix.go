//go:build !windows

package ctl

import (
	"os/exec"
	"syscall"
)

// detach puts the daemon in its own session so it outlives the terminal.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
