//go:build windows

package supervisor

import (
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/binkyhq/binky/host/internal/winjob"
)

// runSys holds a run's job open while the daemon supervises it, so its
// name stays (the service's processes hold one too: winjob.Job.Start).
type runSys struct{ job *winjob.Job }

func (s runSys) close() {
	if s.job != nil {
		s.job.Close()
	}
}

// startProcess starts cmd in the service's named job (winjob.Name of its
// marker), created when it does not exist yet. The job never kills on
// close: the service outlives the daemon and is adopted again.
func startProcess(cmd *exec.Cmd, key Key) (runSys, error) {
	j, err := winjob.Create(winjob.Name(key.Marker()), false)
	if err != nil {
		return runSys{}, err
	}
	if err := j.Start(cmd); err != nil {
		j.Close()
		return runSys{}, err
	}
	return runSys{job: j}, nil
}

// adoptedSys reopens an adopted service's job by name; without it (a
// leader that lost its job, a binky before jobs) the stop falls back to
// the leader's process tree.
func adoptedSys(key Key) runSys {
	j, err := winjob.Open(winjob.Name(key.Marker()))
	if err != nil {
		return runSys{}
	}
	return runSys{job: j}
}

// endGroup stops run r: CTRL_BREAK_EVENT to its process group (unless the
// stop signal is SIGKILL), then, if anything of the job is left after
// StopTimeout, or the event could not be sent, the job's termination, so
// no descendant escapes. A run without a job falls back to its leader's
// process tree. It closes the run's job handle.
func endGroup(spec Spec, r *run) []error {
	defer r.sys.close()
	members := func() []int {
		if r.sys.job != nil {
			if pids, err := r.sys.job.Pids(); err == nil {
				return pids
			}
		}
		if !groupAlive(r.pgid) {
			return nil
		}
		tree, _ := processTree(uint32(r.pgid))
		pids := make([]int, len(tree))
		for i, p := range tree {
			pids[i] = int(p)
		}
		return pids
	}
	pids := members()
	if len(pids) == 0 {
		return nil
	}
	if sig, _ := ParseSignal(spec.StopSignal); sig != killSignal {
		// The leader's console first: the group's other processes share it.
		if i := slices.Index(pids, r.pgid); i > 0 {
			pids[0], pids[i] = pids[i], pids[0]
		}
		if err := winjob.CtrlBreak(r.pgid, pids); err != nil {
			_ = noteLog(spec.LogPath, "%s: %v; terminating it", spec.Key.Service, err)
		} else if waitEmpty(members, spec.StopTimeout) {
			return nil
		}
	}
	var errs []error
	if r.sys.job != nil {
		if err := r.sys.job.Terminate(1); err != nil {
			errs = append(errs, err)
		}
	} else if err := signalGroup(r.pgid, killSignal); err != nil {
		errs = append(errs, err)
	}
	if !waitEmpty(members, killWait) {
		errs = append(errs, fmt.Errorf("process group %d still has live processes %v after its job was terminated", r.pgid, members()))
	}
	return errs
}

// waitEmpty waits up to d for members to list nothing.
func waitEmpty(members func() []int, d time.Duration) bool {
	return pollUntil(d, func() bool { return len(members()) == 0 })
}

// groupLeftovers lists what is left in the job of a service whose leader
// died while the daemon was down: a job's name is the service's marker, so
// no stranger can be in it.
func groupLeftovers(marker string, _ int) []int { return markedProcesses(marker) }
