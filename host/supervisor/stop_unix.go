//go:build unix

package supervisor

import (
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// endGroup signals run r's process group with the stop signal, then with
// SIGKILL after StopTimeout, and waits for it to have no live process.
func endGroup(spec Spec, r *run) []error {
	var errs []error
	if groupAlive(r.pgid) {
		sig, _ := ParseSignal(spec.StopSignal) // checked by normalize
		if err := signalGroup(r.pgid, sig); err != nil {
			errs = append(errs, err)
		}
		if !waitGone(r.pgid, spec.StopTimeout) {
			if err := signalGroup(r.pgid, killSignal); err != nil {
				errs = append(errs, err)
			}
			if !waitGone(r.pgid, killWait) {
				errs = append(errs, fmt.Errorf("process group %d still has live processes %v after SIGKILL", r.pgid, groupMembers(r.pgid)))
			}
		}
	}
	return errs
}

// waitGone waits up to d for group pgid to have no live process.
func waitGone(pgid int, d time.Duration) bool {
	return pollUntil(d, func() bool { return !groupAlive(pgid) })
}

// groupLeftovers lists the live members of group pgid that carry marker:
// the group id may have been reused since its leader died, so membership
// alone proves nothing.
func groupLeftovers(marker string, pgid int) []int {
	marked := markedProcesses(marker)
	var pids []int
	for _, p := range groupMembers(pgid) {
		if slices.Contains(marked, p) {
			pids = append(pids, p)
		}
	}
	return pids
}

// runSys is what a run holds of the platform: nothing on Unix.
type runSys struct{}

func (runSys) close() {}

// startProcess starts cmd (its process group is sysProcAttr's).
func startProcess(cmd *exec.Cmd, _ Key) (runSys, error) { return runSys{}, cmd.Start() }

// adoptedSys: nothing to reopen on Unix.
func adoptedSys(Key) runSys { return runSys{} }
