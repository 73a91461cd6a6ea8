//go:build windows

package health

import (
	"context"
	"os/exec"
)

// shellCommand runs s with cmd /C; a timed-out probe's process is killed.
func shellCommand(ctx context.Context, s string) *exec.Cmd {
	return exec.CommandContext(ctx, "cmd", "/C", s)
}
