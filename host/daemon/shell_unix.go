//go:build !windows

package daemon

import (
	"os/exec"
	"syscall"
)

func shellPath() string { return "sh" }
func shellFlag() string { return "-c" }

// groupHook runs a migrate or seed in a process group of its own, and ends
// the whole group when its context ends.
func groupHook(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
