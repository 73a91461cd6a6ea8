//go:build windows

package world

import (
	"context"
	"os/exec"

	"github.com/binkyhq/binky/host/cmdshell"
)

// shellCommand runs command through cmd.exe /d /s /v:on /c with the command
// line as written (host/cmdshell), with no console window.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return cmdshell.Command(ctx, command)
}

// groupHook: on Windows the hook already has a process group of its own
// (cmdshell.Flags); a cancelled context ends it through its process.
func groupHook(cmd *exec.Cmd) {}
