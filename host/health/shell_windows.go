//go:build windows

package health

import (
	"context"
	"os/exec"

	"github.com/binkyhq/binky/host/cmdshell"
)

// shellCommand runs s with cmd.exe /d /s /v:on /c, the command line as
// written (host/cmdshell), with no console window; checkExec runs it in a
// job of its own (winjob.Run), so a timed-out probe's whole job is killed.
func shellCommand(ctx context.Context, s string) *exec.Cmd {
	return cmdshell.Command(ctx, s)
}
