package supervisor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/binkyhq/binky/host/state"
)

// Adopt takes over processes recorded by an earlier daemon, one result per
// record, in order. A process still running with the recorded start time is
// supervised again, its exit learnt through a pidfd (a process handle on
// Windows); it is starting, not running, until its health probe passes, as
// after a spawn. A recorded pid that now
// belongs to another process is marked lost and never signalled. A process
// that died while no daemon watched is reported as exited (exit code
// unknown) and its restart policy applied once: on-failure and always start
// it again, unless the record says NoRestart.
func (s *Supervisor) Adopt(ctx context.Context, recs []Record) []AdoptResult {
	out := make([]AdoptResult, 0, len(recs))
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			out = append(out, AdoptResult{Key: rec.Key, Outcome: AdoptFailed, Err: fmt.Errorf("adopt %s: %w", rec.Key, err)})
			continue
		}
		out = append(out, s.adoptOne(rec))
	}
	return out
}

func (s *Supervisor) adoptOne(rec Record) AdoptResult {
	res := AdoptResult{Key: rec.Key, Outcome: AdoptFailed}
	spec := rec.Spec
	if spec.Key == (Key{}) {
		spec.Key = rec.Key
	}
	spec, err := spec.normalize()
	switch {
	case err != nil:
		res.Err = fmt.Errorf("adopt %s: %w", rec.Key, err)
		return res
	case spec.Key != rec.Key:
		res.Err = fmt.Errorf("adopt %s: the record's spec is for %s", rec.Key, spec.Key)
		return res
	case rec.Pid <= 1 || rec.Pgid <= 1:
		res.Err = fmt.Errorf("adopt %s: recorded pid %d, group %d: not a service process", rec.Key, rec.Pid, rec.Pgid)
		return res
	case !adoptionSupported:
		res.Err = fmt.Errorf("adopt %s: re-adopting needs linux (/proc and pidfd) or windows (job objects), not %s: %w", rec.Key, runtime.GOOS, errors.ErrUnsupported)
		return res
	}
	u, err := s.claim(spec)
	if err != nil {
		res.Err = err
		return res
	}
	if u == nil {
		res.Outcome = AdoptSkipped
		return res
	}
	// Open the pidfd before reading the start time: if the start time then
	// matches, the pidfd names the recorded process, not a successor.
	w, werr := openPidWatch(rec.Pid)
	st, serr := readStat(rec.Pid)
	alive := serr == nil && !st.dead()
	switch {
	case alive && st.StartTime == rec.StartTime && werr == nil:
		return s.adoptRunning(u, spec, rec, st, w)
	case alive && st.StartTime != rec.StartTime:
		if w != nil {
			w.close()
		}
		msg := fmt.Sprintf("pid %d now belongs to another process (start time %d, recorded %d); not signalled", rec.Pid, st.StartTime, rec.StartTime)
		s.recordExit(u, Exit{Pid: rec.Pid, Code: -1, Err: msg, State: state.ServiceLost})
		u.log.Warn("recorded process is gone; its pid was reused", "pid", rec.Pid)
		s.emit(Event{Name: EventLost, Key: rec.Key, Pid: rec.Pid, ExitCode: -1, Error: msg})
		s.finish(u)
		return AdoptResult{Key: rec.Key, Outcome: AdoptLost}
	case alive: // start time matches but no pidfd: cannot watch it
		res.Err = fmt.Errorf("adopt %s: %w", rec.Key, werr)
		s.setState(u, state.ServiceLost)
		s.finish(u)
		return res
	}
	if w != nil {
		w.close()
	}
	return s.adoptDead(u, spec, rec)
}

// adoptRunning supervises a live recorded process again.
func (s *Supervisor) adoptRunning(u *unit, spec Spec, rec Record, st procStat, w *pidWatch) AdoptResult {
	pgid := rec.Pgid
	if st.Pgrp != pgid {
		u.log.Warn("recorded process group differs from the live one; using the live one", "recorded", pgid, "live", st.Pgrp)
		pgid = st.Pgrp
	}
	r := newRun(rec.Pid, pgid, rec.StartTime)
	r.adopted = true
	r.watch = w
	r.sys = adoptedSys(spec.Key)
	go func() {
		if err := w.wait(); err == nil {
			r.exit = Exit{Pid: rec.Pid, Code: -1, Err: "exited (exit status unknown: not a child of this daemon)"}
			close(r.exited)
		}
		w.close()
	}()
	// It was recorded when it started, before any probe passed, and no
	// daemon watched it since: it is starting until its probe passes
	// again, like a process just spawned.
	s.mu.Lock()
	u.run = r
	u.state = state.ServiceStarting
	if spec.Health == nil {
		u.state = state.ServiceRunning
	}
	u.since = time.Now()
	s.mu.Unlock()
	u.log.Info("adopted", "pid", rec.Pid, "pgid", pgid)
	s.emit(Event{Name: EventAdopted, Key: rec.Key, Pid: rec.Pid})
	s.watchHealth(u, spec, r)
	go s.runUnit(u, spec, r, 0, s.openWatch(u, spec))
	return AdoptResult{Key: rec.Key, Outcome: AdoptAdopted, Pid: rec.Pid}
}

// adoptDead reports a process that died unwatched, ends what it left in its
// group, and applies the restart policy once.
func (s *Supervisor) adoptDead(u *unit, spec Spec, rec Record) AdoptResult {
	s.reapLeftovers(spec, rec.Pgid)
	exit := Exit{Pid: rec.Pid, Code: -1, Err: "exited while the daemon was down (exit status unknown)"}
	dec, failures := s.policy.Decide(0, spec.Restart, exit, s.jitter())
	if rec.NoRestart {
		dec.Restart = false
	}
	exit.State = stateAfter(dec, exit)
	if dec.Restart {
		exit.State = state.ServiceStarting
	}
	s.recordExit(u, exit)
	s.emit(Event{Name: EventExited, Key: rec.Key, Pid: rec.Pid, ExitCode: -1, Error: exit.Err})
	if !dec.Restart {
		s.finish(u)
		return AdoptResult{Key: rec.Key, Outcome: AdoptExited}
	}
	_ = noteLog(spec.LogPath, "%s exited while the daemon was down; restarting it", spec.Key.Service)
	w := s.openWatch(u, spec)
	r, err := s.spawn(u, spec)
	if err != nil {
		if w != nil {
			w.close()
		}
		failure := Exit{Code: -1, Err: err.Error(), State: state.ServiceFailed}
		s.recordExit(u, failure)
		s.emit(Event{Name: EventFailed, Key: rec.Key, ExitCode: -1, Error: err.Error()})
		s.finish(u)
		return AdoptResult{Key: rec.Key, Outcome: AdoptFailed, Err: fmt.Errorf("adopt %s: %w", rec.Key, err)}
	}
	go s.runUnit(u, spec, r, failures, w)
	return AdoptResult{Key: rec.Key, Outcome: AdoptRestarted, Pid: r.pid}
}
