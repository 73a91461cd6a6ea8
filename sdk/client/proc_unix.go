//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that the adapter and
// anything it spawns can be killed together.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup sends SIGKILL to the adapter's whole process group. It is called
// on a timeout and again after every call, to take down children the adapter
// left behind. A group that is already gone is not an error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
