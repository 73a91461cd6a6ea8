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
	detach(cmd)
	if err := cmd.Start(); err != nil {
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
				// A daemon holds the lock but its socket did not answer:
				// it was deleted, and that daemon makes it again within a
				// second (host/daemon keepSocket).
				if p, perr := awaitSocket(ctx, home, 3*time.Second); perr == nil {
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

// Stop asks home's daemon to exit and waits until its socket stops answering.
// Worlds keep running. It reports false when no daemon was running.
func Stop(ctx context.Context, home string) (bool, error) {
	c := &api.Client{Home: home}
	if err := c.Call(ctx, api.OpStop, nil, api.Handlers{}, nil); err != nil {
		if errors.Is(err, api.ErrNoDaemon) {
			return false, nil
		}
		return false, err
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := Ping(ctx, home); errors.Is(err, api.ErrNoDaemon) {
			return true, nil
		}
		time.Sleep(30 * time.Millisecond)
	}
	return true, fmt.Errorf("daemon still answers 15s after stop")
}
