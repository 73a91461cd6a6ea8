//go:build windows

package winlock

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// offsetHigh places the locked byte at 1<<32 (4 GiB), past any content a
// lock file holds.
const offsetHigh = 1

func overlapped() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: offsetHigh} }

// TryLock takes the lock on f without waiting; false (and no error) means
// another handle holds it. shared locks coexist with each other.
func TryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, overlapped())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}

// Lock waits for the exclusive lock on f until ctx ends, trying again with
// a growing pause (2ms to 50ms).
func Lock(ctx context.Context, f *os.File) error {
	step := 2 * time.Millisecond
	for {
		ok, err := TryLock(f, true)
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step):
		}
		step = min(step*2, 50*time.Millisecond)
	}
}

// Unlock releases the lock f holds (closing f releases it too).
func Unlock(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, overlapped())
}
