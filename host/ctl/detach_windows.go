//go:build windows

package ctl

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/binkyhq/binky/host/internal/winjob"
	"golang.org/x/sys/windows"
)

// startDetached starts the daemon without a console of its own, in a new
// process group, so closing the terminal does not end it, and outside the
// job binky runs in (CREATE_BREAKAWAY_FROM_JOB) when that job allows it:
// an SSH session, a CI step or a terminal that runs its commands in a
// kill-on-close job would otherwise end the daemon, and every world's
// supervision with it, when it closes. Whether the job allows it is learnt
// by trying (CreateProcess refuses the flag with access denied); where it
// does not, the daemon starts inside the job, and binky doctor says so
// (winjob.CanBreakaway). Returns the command that was started.
func startDetached(cmd *exec.Cmd) (*exec.Cmd, error) {
	const detachedProcess = 0x00000008
	flags := uint32(syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess)
	if p, err := winjob.CurrentParent(); err == nil && p.InJob && !p.Silent {
		first := *cmd
		first.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags | windows.CREATE_BREAKAWAY_FROM_JOB}
		err := first.Start()
		if err == nil || !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			return &first, err
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
	return cmd, cmd.Start()
}
