//go:build windows

package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/internal/winlock"
)

// startLock serializes daemon starts of one BINKY_HOME across processes,
// as on Unix, with a LockFileEx lock on daemon.start.lock: concurrent CLI
// calls with no daemon running start one daemon, and the others find it.
// It waits until ctx ends or 20s pass, and returns the unlock.
func startLock(ctx context.Context, home string) (func(), error) {
	path := filepath.Join(home, "daemon.start.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := winlock.Lock(wctx, f); err != nil {
		f.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("another binky has been starting the daemon for 20s (lock %s); see %s", path, filepath.Join(home, LogName))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { winlock.Unlock(f); f.Close() }, nil
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
	ok, err := winlock.TryLock(f, true)
	if err != nil {
		f.Close()
		return func() {}, false
	}
	if !ok {
		f.Close()
		return nil, true
	}
	return func() { winlock.Unlock(f); f.Close() }, false
}
