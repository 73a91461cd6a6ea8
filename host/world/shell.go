package world

import (
	"os/exec"
	"time"

	"github.com/binkyhq/binky/host/internal/winjob"
)

// runGrouped runs a one-shot command of a world — a migrate or seed, a
// setup step, a verify check, binky run's command — in a process group of
// its own (groupHook), inside a kill-on-close job on Windows (winjob.Run),
// so that ending its context ends everything it started. Wait gives up on
// output a leftover still holds 5 s after the command exits.
func runGrouped(cmd *exec.Cmd) error {
	groupHook(cmd)
	cmd.WaitDelay = 5 * time.Second
	return winjob.Run(cmd)
}
