//go:build !windows

package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// startLock serializes daemon starts of one BINKY_HOME across processes:
// twenty CLI calls at the same instant with no daemon running start one
// daemon, and the others find it. It waits for the lock until ctx ends or
// 20s pass, and returns the unlock.
func startLock(ctx context.Context, home string) (func(), error) {
	path := filepath.Join(home, "daemon.start.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	step := 2 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another binky has been starting the daemon for 20s (lock %s); see %s", path, filepath.Join(home, LogName))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(step):
		}
		step = min(step*2, 50*time.Millisecond)
	}
}

// tryStartLock takes daemon.start.lock if it is free at once, and returns
// the unlock; busy is true when a start holds it. When the lock cannot be
// opened at all it returns a no-op unlock (nothing to serialize with).
func tryStartLock(home string) (unlock func(), busy bool) {
	path := filepath.Join(home, "daemon.start.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}, false
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true
		}
		return func() {}, false
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, false
}
