//go:build !windows

package world

import (
	"context"
	"os/exec"
	"syscall"
)

// shellCommand runs command through sh -c.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "sh", "-c", command)
}

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
