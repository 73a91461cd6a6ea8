package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// killWait bounds the wait for a group to vanish after SIGKILL (a process in
// uninterruptible sleep can outlast it) and for the leader's exit to be
// collected once its group is gone.
const killWait = 5 * time.Second

// terminate ends what is left of run r's process group: the stop signal,
// then SIGKILL after StopTimeout. It returns once no live process is left in
// the group and the leader's exit has been collected.
func (s *Supervisor) terminate(spec Spec, r *run) error {
	if r.pid == 0 {
		return nil
	}
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
	select {
	case <-r.exited:
	case <-time.After(killWait):
		errs = append(errs, fmt.Errorf("pid %d: exit not seen %s after its group was gone", r.pid, killWait))
	}
	return errors.Join(errs...)
}

// waitGone waits up to d for group pgid to have no live process. Stopping is
// the one place the supervisor polls: members other than the leader are not
// our children and give no exit notification. The interval grows from 5ms to
// 100ms.
func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := 5 * time.Millisecond
	for {
		if !groupAlive(pgid) {
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
	s.setState(u, StateStopping)
	err := s.terminate(spec, r)
	wasRunning := r.pid != 0
	if wasRunning && r.watch != nil {
		r.release()
	}
	exit := r.exitOr()
	exit.RanFor = time.Since(r.started)
	exit.State = StateStopped
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
// while the daemon was down. The group id may have been reused since, so only
// members carrying this service's marker are signalled, one by one.
func (s *Supervisor) reapLeftovers(spec Spec, pgid int) {
	if pgid <= 1 {
		return
	}
	marked := markedProcesses(spec.Key.Marker())
	var pids []int
	for _, p := range groupMembers(pgid) {
		if slices.Contains(marked, p) {
			pids = append(pids, p)
		}
	}
	if len(pids) == 0 {
		return
	}
	sig, _ := ParseSignal(spec.StopSignal)
	for _, p := range pids {
		_ = signalPid(p, sig)
	}
	deadline := time.Now().Add(spec.StopTimeout)
	for time.Now().Before(deadline) {
		if !anyInGroup(pgid, pids) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range pids {
		_ = signalPid(p, killSignal)
	}
}

func anyInGroup(pgid int, pids []int) bool {
	for _, p := range groupMembers(pgid) {
		if slices.Contains(pids, p) {
			return true
		}
	}
	return false
}
