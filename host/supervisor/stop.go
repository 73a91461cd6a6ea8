package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/state"
)

// killWait bounds the wait for a group to vanish after SIGKILL (a process in
// uninterruptible sleep can outlast it) and for the leader's exit to be
// collected once its group is gone.
const killWait = 5 * time.Second

// terminate ends what is left of run r's process group: the stop signal,
// then SIGKILL after StopTimeout (endGroup, per platform). It returns once
// no live process is left in the group and the leader's exit has been
// collected.
func (s *Supervisor) terminate(spec Spec, r *run) error {
	if r.pid == 0 {
		return nil
	}
	errs := endGroup(spec, r)
	select {
	case <-r.exited:
	case <-time.After(killWait):
		errs = append(errs, fmt.Errorf("pid %d: exit not seen %s after its group was gone", r.pid, killWait))
	}
	return errors.Join(errs...)
}

// pollUntil waits up to d for done to hold. Stopping is the one place the
// supervisor polls: a group's members other than the leader (a job's
// processes, on Windows) are not our children and give no exit
// notification. The interval grows from 5ms to 100ms.
func pollUntil(d time.Duration, done func() bool) bool {
	deadline := time.Now().Add(d)
	step := 5 * time.Millisecond
	for {
		if done() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(step, left))
		step = min(step*2, 100*time.Millisecond)
	}
}

// exitOr is r's exit once collected, else a stand-in saying it was not.
func (r *run) exitOr() Exit {
	if r.hasExited() {
		return r.exit
	}
	return Exit{Pid: r.pid, Code: -1, Err: "exit not collected"}
}

// stopRun is the runner's answer to Stop: end the group, record the exit,
// and report descendants that escaped into a session of their own.
func (s *Supervisor) stopRun(u *unit, spec Spec, r *run) {
	s.setState(u, state.ServiceStopping)
	err := s.terminate(spec, r)
	wasRunning := r.pid != 0
	if wasRunning && r.watch != nil {
		r.release()
	}
	exit := r.exitOr()
	exit.RanFor = time.Since(r.started)
	exit.State = state.ServiceStopped
	s.recordExit(u, exit)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if esc := markedProcesses(spec.Key.Marker()); len(esc) > 0 {
		errs = append(errs, fmt.Errorf("%w: pid %s still running in a session of its own; end it with kill", ErrEscaped, joinPids(esc)))
	}
	var stopErr error
	if len(errs) > 0 {
		stopErr = fmt.Errorf("stop %s: %w", spec.Key, errors.Join(errs...))
		u.log.Warn("stopped with problems", "error", stopErr)
	}
	s.mu.Lock()
	u.stopErr = stopErr
	s.mu.Unlock()
	ev := Event{Name: EventStopped, Key: spec.Key, Pid: exit.Pid, ExitCode: exit.Code}
	if stopErr != nil {
		ev.Error = stopErr.Error()
	}
	s.emit(ev)
}

func joinPids(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

// reapLeftovers ends the processes left in the group of a leader that died
// while the daemon was down (groupLeftovers: those that surely are the
// service's), one by one.
func (s *Supervisor) reapLeftovers(spec Spec, pgid int) {
	if pgid <= 1 {
		return
	}
	marker := spec.Key.Marker()
	pids := groupLeftovers(marker, pgid)
	if len(pids) == 0 {
		return
	}
	sig, _ := ParseSignal(spec.StopSignal)
	for _, p := range pids {
		_ = signalPid(p, sig)
	}
	deadline := time.Now().Add(spec.StopTimeout)
	for time.Now().Before(deadline) {
		if !anyLeft(marker, pgid, pids) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range pids {
		_ = signalPid(p, killSignal)
	}
}

// anyLeft reports whether any of pids is still one of the group's leftovers.
func anyLeft(marker string, pgid int, pids []int) bool {
	for _, p := range groupLeftovers(marker, pgid) {
		if slices.Contains(pids, p) {
			return true
		}
	}
	return false
}
