package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// LogName is the daemon's own log inside BINKY_HOME.
const LogName = "daemon.log"

// Ping asks the daemon of home who it is.
func Ping(ctx context.Context, home string) (*api.PingResult, error) {
	var res api.PingResult
	c := &api.Client{Home: home}
	if err := c.Call(ctx, api.OpPing, nil, api.Handlers{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Ensure returns a client for home's daemon, starting one detached (its own
// session, surviving the caller's terminal) when none answers. exe is the
// calling binary (os.Executable); the daemon is the binkyd beside it or on
// PATH (DaemonBinary).
func Ensure(ctx context.Context, home, exe string) (*api.Client, error) {
	if err := pingSettled(ctx, home); err == nil {
		return &api.Client{Home: home}, nil
	} else if !errors.Is(err, api.ErrNoDaemon) {
		return nil, err
	}
	if _, err := Start(ctx, home, exe); err != nil {
		return nil, err
	}
	return &api.Client{Home: home}, nil
}

// pingSettled pings home's daemon. A daemon dying under the ping (killed
// mid-answer: the connection resets or closes before a reply) is not an
// answer either way, so it pings again until the socket answers or refuses,
// for up to 2s.
func pingSettled(ctx context.Context, home string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, err := Ping(ctx, home)
		var ae *api.Error
		if err == nil || errors.Is(err, api.ErrNoDaemon) || errors.As(err, &ae) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Start launches a daemon for home (`binkyd daemon run`, binkyd found from
// exe by DaemonBinary) and waits until it answers. When one is already
// running it returns its identity.
func Start(ctx context.Context, home, exe string) (*api.PingResult, error) {
	if p, err := Ping(ctx, home); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("create BINKY_HOME %s: %w", home, err)
	}
	// One starter at a time; whoever waited finds the winner's daemon.
	unlock, err := startLock(ctx, home)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if p, err := Ping(ctx, home); err == nil {
		return p, nil
	}
	bin, err := DaemonBinary(exe)
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	logPath := filepath.Join(home, LogName)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open daemon log %s: %w", logPath, err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--home", home, "daemon", "run")
	cmd.Stdin = nil
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Dir = home
	cmd.Env = os.Environ()
	cmd, err = startDetached(cmd)
	if err != nil {
		return nil, fmt.Errorf("start daemon %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.Now().Add(15 * time.Second)
	for {
		if p, err := Ping(ctx, home); err == nil {
			return p, nil
		}
		select {
		case err := <-exited:
			if p, perr := Ping(ctx, home); perr == nil {
				return p, nil // another caller's daemon won the race
			}
			reason := startFailureReason(home, cmd.Process.Pid)
			if strings.Contains(reason, "already running") {
				// A daemon holds the lock but its socket did not answer
				// yet: one still starting (re-adopting its worlds on a
				// loaded machine takes seconds), or one whose socket was
				// deleted and is made again within a second
				// (api.KeepSocket).
				if p, perr := awaitSocket(ctx, home, 10*time.Second); perr == nil {
					return p, nil
				}
			}
			if reason != "" {
				return nil, fmt.Errorf("daemon exited at start: %s", reason)
			}
			return nil, fmt.Errorf("daemon exited at start (%v); see %s", err, logPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(40 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("daemon did not answer within 15s; see %s", logPath)
		}
	}
}

// awaitSocket pings home's daemon until it answers or wait passes.
func awaitSocket(ctx context.Context, home string, wait time.Duration) (*api.PingResult, error) {
	deadline := time.Now().Add(wait)
	for {
		p, err := Ping(ctx, home)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return p, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PidName is the file inside BINKY_HOME the daemon holds locked (flock on
// Unix) for as long as it runs, holding its pid.
const PidName = "daemon.pid"

// StopWait is how long Stop waits for the daemon to exit.
const StopWait = 15 * time.Second

// NotStoppedError is Stop's answer when a daemon has not exited: asked to
// stop, it still holds daemon.pid (or still answers) after the wait; or,
// not answering on daemon.sock at all, it has held daemon.pid throughout.
type NotStoppedError struct {
	// Pid is the daemon's, from its answer or daemon.pid; 0 when neither
	// told.
	Pid  int
	Home string
	Wait time.Duration
	// Asked is whether the daemon took the stop request; Answers whether
	// it still answered on daemon.sock at the end.
	Asked, Answers bool
}

func (e *NotStoppedError) Error() string {
	who, kill := "the daemon", "end its process (worlds keep running)"
	if e.Pid > 0 {
		who = fmt.Sprintf("the daemon (pid %d)", e.Pid)
		kill = fmt.Sprintf("kill %d ends it (worlds keep running)", e.Pid)
	}
	sock, lock := api.Socket(e.Home), filepath.Join(e.Home, PidName)
	switch {
	case !e.Asked:
		return fmt.Sprintf("%s did not stop: for %s it has held %s without answering on %s (stuck, or still starting); %s", who, e.Wait, lock, sock, kill)
	case e.Answers:
		return fmt.Sprintf("%s did not exit within %s of being asked to stop: it still answers on %s and holds %s; %s", who, e.Wait, sock, lock, kill)
	}
	return fmt.Sprintf("%s did not exit within %s of being asked to stop: it no longer answers on %s but still holds %s; %s", who, e.Wait, sock, lock, kill)
}

// Stop asks home's daemon to exit and waits, up to StopWait, until it has:
// its socket no longer answers and its lock on daemon.pid is released.
// Worlds keep running. It reports false when no daemon was running, and a
// *NotStoppedError, naming the pid, when the daemon has not exited in time
// (or holds daemon.pid without answering).
func Stop(ctx context.Context, home string) (bool, error) {
	return StopWithin(ctx, home, StopWait)
}

// StopWithin is Stop waiting up to wait for the daemon to exit.
func StopWithin(ctx context.Context, home string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	var (
		pid     int  // the daemon being stopped
		asked   bool // it took the stop request
		seen    bool // a daemon answered or held the lock
		answers bool
		step    = 10 * time.Millisecond
	)
	for {
		p, err := pingWithin(ctx, home, time.Until(deadline))
		if ctx.Err() != nil {
			return seen, ctx.Err()
		}
		var ae *api.Error
		if errors.As(err, &ae) {
			return true, fmt.Errorf("ask the daemon to stop: %w", err) // it refused the caller
		}
		answers = err == nil && (pid == 0 || p.Pid == pid)
		if err == nil && !asked {
			pid, seen = p.Pid, true
			err := callWithin(ctx, home, api.OpStop, time.Until(deadline))
			switch {
			case ctx.Err() != nil:
				return seen, ctx.Err()
			case err == nil, errors.Is(err, api.ErrNoDaemon):
			case errors.Is(err, context.DeadlineExceeded):
				// Sent, never answered: a wedged daemon. The wait is
				// spent; the lock says whether it went anyway.
				answers = false
			default:
				return seen, fmt.Errorf("ask the daemon (pid %d) to stop: %w", pid, err)
			}
			asked = true
			if answers {
				continue
			}
		}
		if !answers {
			held, holder, known, lerr := lockState(home)
			if lerr != nil {
				return seen, lerr
			}
			if known {
				switch {
				case held && pid == 0:
					// Holding the lock without answering: stopping,
					// starting or stuck. Wait for it either way.
					pid, seen = holder, true
				case !held || holder != 0 && holder != pid:
					// Released (another daemon may hold it since, with
					// its own pid: this one is gone).
					return seen, nil
				}
			}
		}
		if time.Now().After(deadline) {
			if pid == 0 {
				_, pid, _, _ = lockState(home)
			}
			return true, &NotStoppedError{Pid: pid, Home: home, Wait: wait, Asked: asked, Answers: answers}
		}
		select {
		case <-ctx.Done():
			return seen, ctx.Err()
		case <-time.After(step):
		}
		step = min(step*2, 100*time.Millisecond)
	}
}

// pingWithin is Ping giving up after wait (at least a second): a daemon
// that accepts and never answers must not hold Stop past its bound.
func pingWithin(ctx context.Context, home string, wait time.Duration) (*api.PingResult, error) {
	ctx, cancel := context.WithTimeout(ctx, max(wait, time.Second))
	defer cancel()
	return Ping(ctx, home)
}

// callWithin sends op (no arguments, no result) giving up after wait (at
// least a second).
func callWithin(ctx context.Context, home, op string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, max(wait, time.Second))
	defer cancel()
	c := &api.Client{Home: home}
	return c.Call(ctx, op, nil, api.Handlers{}, nil)
}
