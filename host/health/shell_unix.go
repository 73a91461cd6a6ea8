//go:build unix

package health

import (
	"context"
	"os/exec"
	"syscall"
)

// shellCommand runs s with sh -c in a process group of its own, so that a
// timed-out probe is killed with everything it started.
func shellCommand(ctx context.Context, s string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", s)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return cmd
}
