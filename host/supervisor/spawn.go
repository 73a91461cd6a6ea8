package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/state"
)

// run is one process of a service: spawned by us, or adopted.
type run struct {
	pid, pgid int
	startTime uint64
	started   time.Time
	adopted   bool
	watch     *pidWatch // adopted runs: how the exit is learnt
	cgroup    string    // the cgroup it was started in ("" when none): its processes are the service's
	sys       runSys    // what the platform holds for it (Windows: the service's job)

	exited chan struct{} // closed once the process has ended
	exit   Exit          // Pid, Code, Signal, Err; valid once exited is closed

	healthDone chan struct{} // closed once the probe passed or gave up
	healthErr  error
}

func newRun(pid, pgid int, startTime uint64) *run {
	return &run{
		pid: pid, pgid: pgid, startTime: startTime, started: time.Now(),
		exited: make(chan struct{}), healthDone: make(chan struct{}),
	}
}

// failedRun stands for a spawn that failed, so the runner applies the
// restart policy to it like to any short run.
func failedRun(err error) *run {
	r := newRun(0, 0, 0)
	r.exit = Exit{Code: -1, Err: err.Error()}
	close(r.exited)
	r.healthErr = err
	close(r.healthDone)
	return r
}

func (r *run) hasExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// alive is health.Wait's view of the process: nil while it runs.
func (r *run) alive() error {
	if r.hasExited() {
		return errors.New(r.exit.Err)
	}
	return nil
}

// release drops what watches the process, leaving the process alone.
func (r *run) release() {
	if r.watch != nil {
		r.watch.close()
	}
	r.sys.close()
}

// spawn starts one process of the service. Its output goes straight to the
// log file (no pipe through the daemon), rolled first when past
// LogRollSize.
func (s *Supervisor) spawn(u *unit, spec Spec) (*run, error) {
	if spec.Dir != "" {
		// exec reports a missing directory as a missing shell; say what it is.
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("start %s: working directory %s does not exist (or is not a directory)", spec.Key, spec.Dir)
		}
	}
	if err := s.logs.roll(spec.LogPath); err != nil {
		u.log.Warn("cannot roll log; appending to it", "error", err)
	}
	f, err := openLog(spec.LogPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Key, err)
	}
	defer f.Close() // the child has its own descriptor once started
	args := shellArgs(spec.Command)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.env()
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = sysProcAttr(spec.Command)
	done, cgErr := s.cgroups.intoCgroup(cmd.SysProcAttr, spec.Key)
	if cgErr != nil {
		u.log.Warn("cannot use the world's cgroup; tracking by process group only", "error", cgErr)
	}
	sys, err := startProcess(cmd, spec.Key)
	done()
	inCgroup := err == nil && usedCgroup(cmd.SysProcAttr)
	if err != nil && usedCgroup(cmd.SysProcAttr) {
		// A kernel or policy that refuses clone-into-cgroup: start plainly.
		u.log.Warn("starting in the world's cgroup failed; tracking by process group only", "error", err)
		cmd = exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = spec.Dir, spec.env(), f, f
		cmd.SysProcAttr = sysProcAttr(spec.Command)
		sys, err = startProcess(cmd, spec.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Key, err)
	}
	pid := cmd.Process.Pid
	// Read the start time before anything can reap the process.
	st, err := procStartTime(pid)
	if err != nil && adoptionSupported {
		u.log.Warn("no start time recorded; the process cannot be re-adopted", "pid", pid, "error", err)
	}
	r := newRun(pid, pid, st)
	r.sys = sys
	if inCgroup {
		if cg := cgroupOf(pid); cg != "" && cg != "/" {
			r.cgroup = cg // the world's cgroup, which it was cloned into
		}
	}
	// Learn of the exit through a pidfd on the runtime's poller first, so
	// the wait holds no OS thread while the service runs (a blocked
	// wait4 does: one thread per service); Wait then reaps at once.
	exitWatch, _ := openPidWatch(pid)
	go func() {
		if exitWatch != nil {
			exitWatch.wait()
			exitWatch.close()
		}
		werr := cmd.Wait()
		r.exit = exitOf(pid, cmd.ProcessState, werr)
		close(r.exited)
	}()
	s.mu.Lock()
	u.run = r
	u.state = state.ServiceStarting
	u.reason = ""
	if spec.Health == nil {
		u.state = state.ServiceRunning
	}
	u.since = r.started
	s.mu.Unlock()
	if s.store != nil {
		rec := Record{Key: spec.Key, Spec: spec, Pid: pid, Pgid: pid, StartTime: st}
		if err := s.store.ProcessStarted(rec); err != nil {
			u.log.Error("cannot record process start", "pid", pid, "error", err)
		}
	}
	u.log.Info("started", "pid", pid)
	s.emit(Event{Name: EventStarted, Key: spec.Key, Pid: pid})
	s.watchHealth(u, spec, r)
	return r, nil
}

func exitOf(pid int, ps *os.ProcessState, err error) Exit {
	if ps == nil {
		msg := "wait failed"
		if err != nil {
			msg = err.Error()
		}
		return Exit{Pid: pid, Code: -1, Err: msg}
	}
	return Exit{Pid: pid, Code: ps.ExitCode(), Signal: exitSignal(ps), Err: ps.String()}
}

// watchHealth runs the service's probe against run r in the background; its
// outcome is what WaitHealthy returns and what moves the state to running.
func (s *Supervisor) watchHealth(u *unit, spec Spec, r *run) {
	if spec.Health == nil {
		close(r.healthDone)
		return
	}
	go func() {
		// One Prober for the run's probes, its start-up wait and the
		// monitor's: an http probe keeps its connection to this process
		// alive between attempts. A restart is a new run with a new Prober.
		pr := health.NewProber(*spec.Health)
		// Only the service's own listener counts: a probe answered by
		// another program on its port (another home's world) is not health.
		owner := listenerCheck(spec, r)
		err := pr.Wait(s.ctx, health.Options{Alive: r.alive, Owner: owner})
		r.healthErr = err
		if s.ctx.Err() != nil {
			pr.Close()
			close(r.healthDone)
			return
		}
		// The state moves before a waiter hears the outcome: an up that
		// returns healthy is followed by a status that says running.
		s.mu.Lock()
		current := u.run == r && !r.hasExited()
		if current {
			u.state, u.reason = state.ServiceRunning, ""
			if err != nil {
				u.state, u.reason = state.ServiceUnhealthy, "unhealthy: "+err.Error()
			}
		}
		s.mu.Unlock()
		close(r.healthDone)
		if !current {
			pr.Close()
			return
		}
		// The probe goes on while the service runs, healthy or not: a
		// service that gave up at start may still come good, and one that
		// was healthy may stop answering.
		s.monitorHealth(u, spec, r, pr, owner, err != nil)
		if err == nil {
			s.emit(Event{Name: EventHealthy, Key: spec.Key, Pid: r.pid})
			return
		}
		tail, _ := ReadLogs(spec.LogPath, 20)
		u.log.Warn("health probe gave up", "error", err)
		s.emit(Event{Name: EventUnhealthy, Key: spec.Key, Pid: r.pid, Error: err.Error(), LogTail: tail})
	}()
}
