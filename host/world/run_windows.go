//go:build windows

package world

import (
	"os/exec"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
)

// ttySupported: binky run -t needs a pseudo console (ConPTY), not done yet;
// -i (piped stdin) works.
const ttySupported = false

func (e *Engine) runTTY(cmd *exec.Cmd, rec *registry.Worktree, env []string, size api.Winsize, in Input, s Progress) int {
	s.Output(0, "stderr", "binky: a terminal is not supported on Windows yet\n")
	return -1
}
