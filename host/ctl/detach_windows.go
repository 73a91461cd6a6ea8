//go:build windows

package ctl

import (
	"os/exec"
	"syscall"
)

// detach starts the daemon without a console of its own, in a new process
// group, so closing the terminal does not end it.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
