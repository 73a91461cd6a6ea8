package supervisor

import (
	"time"

	"github.com/binkyhq/binky/host/state"
)

// runUnit owns a service from its first process until it is stopped, gives
// up, exits for good, or the supervisor shuts down. It alone records exits,
// so each is recorded once.
func (s *Supervisor) runUnit(u *unit, spec Spec, r *run, failures int, w *watcher) {
	defer s.finish(u)
	var changes <-chan string
	if w != nil {
		defer w.close()
		changes = w.C
	}
	for {
		select {
		case <-s.ctx.Done():
			r.release() // shut down: the process keeps running
			return
		case <-u.stopReq:
			s.stopRun(u, spec, r)
			return
		case rel := <-changes:
			s.watchRestart(u, spec, r, rel)
			failures = 0
			s.mu.Lock()
			u.restarts++
			s.mu.Unlock()
			r = s.respawn(u, spec)
		case <-r.exited:
			exit := r.exit
			exit.RanFor = time.Since(r.started)
			if r.pid != 0 {
				if err := s.terminate(spec, r); err != nil {
					u.log.Warn("cannot stop what is left of the process group", "error", err)
				}
			}
			dec, n := s.policy.Decide(failures, spec.Restart, exit, s.jitter())
			failures = n
			exit.State = stateAfter(dec, exit)
			s.recordExit(u, exit)
			s.emit(Event{Name: EventExited, Key: spec.Key, Pid: exit.Pid, ExitCode: exit.Code, Error: exit.Err})
			if dec.GiveUp {
				_ = noteLog(spec.LogPath, "%s (%s); gave up after %d failed starts", spec.Key.Service, exit.Err, dec.Attempt)
				tail, _ := ReadLogs(spec.LogPath, 20)
				u.log.Error("gave up restarting", "starts", dec.Attempt, "last_exit", exit.Err)
				s.emit(Event{Name: EventFailed, Key: spec.Key, Pid: exit.Pid, ExitCode: exit.Code, Error: exit.Err, LogTail: tail, Attempt: dec.Attempt})
				return
			}
			if !dec.Restart {
				return
			}
			_ = noteLog(spec.LogPath, "%s (%s); restarting in %s", spec.Key.Service, exit.Err, dec.Delay.Round(time.Millisecond))
			s.emit(Event{Name: EventRestarting, Key: spec.Key, Pid: exit.Pid, ExitCode: exit.Code, Error: exit.Err, Attempt: dec.Attempt, Delay: dec.Delay})
			timer := time.NewTimer(dec.Delay)
			select {
			case <-timer.C:
			case <-s.ctx.Done():
				timer.Stop()
				return
			case <-u.stopReq:
				timer.Stop()
				s.setState(u, state.ServiceStopped)
				s.emit(Event{Name: EventStopped, Key: spec.Key})
				return
			case rel := <-changes:
				timer.Stop()
				_ = noteLog(spec.LogPath, "%s changed; starting %s now", rel, spec.Key.Service)
				s.emit(Event{Name: EventWatch, Key: spec.Key, Path: rel})
				failures = 0
			}
			s.mu.Lock()
			u.restarts++
			s.mu.Unlock()
			r = s.respawn(u, spec)
		}
	}
}

// openWatch starts the service's file watch, before its first process so
// that no change made after Start returns is missed. A watch that cannot be
// set up (the inotify limit, a missing root) degrades to no watch.
func (s *Supervisor) openWatch(u *unit, spec Spec) *watcher {
	if len(spec.Watch) == 0 {
		return nil
	}
	w, err := startWatch(spec.WatchRoot, spec.Watch, logFilesAndIndexes(spec.LogPath), s.debounce, u.log)
	if err != nil {
		u.log.Warn("file watch unavailable; changes will not restart the service", "error", err)
		s.emit(Event{Name: EventWatchFailed, Key: spec.Key, Error: err.Error()})
		return nil
	}
	return w
}

// respawn starts the next process; a failed spawn becomes a run that has
// already failed, so the policy (and its give-up) applies to it too.
func (s *Supervisor) respawn(u *unit, spec Spec) *run {
	r, err := s.spawn(u, spec)
	if err != nil {
		_ = noteLog(spec.LogPath, "%v", err)
		u.log.Error("restart failed", "error", err)
		return failedRun(err)
	}
	return r
}

// watchRestart stops the running process because a watched file changed.
func (s *Supervisor) watchRestart(u *unit, spec Spec, r *run, rel string) {
	_ = noteLog(spec.LogPath, "%s changed; restarting %s", rel, spec.Key.Service)
	u.log.Info("watched file changed; restarting", "path", rel)
	s.emit(Event{Name: EventWatch, Key: spec.Key, Pid: r.pid, Path: rel})
	s.setState(u, state.ServiceStopping)
	if err := s.terminate(spec, r); err != nil {
		u.log.Warn("stopping for a watch restart", "error", err)
	}
	exit := r.exitOr()
	exit.RanFor = time.Since(r.started)
	exit.State = state.ServiceStarting
	s.recordExit(u, exit)
}
