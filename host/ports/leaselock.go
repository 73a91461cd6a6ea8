package ports

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// LockBusyError is a lease lock still held when the wait for it ended.
// Only this user's processes can hold it (the lock file is 0600 in this
// user's own subdirectory).
type LockBusyError struct {
	Path string
	// Pid and Owner are the holder's, when the platform tells (Linux:
	// /proc/locks); 0 and "" otherwise.
	Pid    int
	Owner  string
	Waited time.Duration
}

func (e *LockBusyError) Error() string {
	who := "another process (its pid cannot be seen)"
	if e.Pid > 0 {
		who = fmt.Sprintf("pid %d", e.Pid)
		if e.Owner != "" {
			who += " (" + ownerLabel(e.Owner) + ")"
		}
	}
	return fmt.Sprintf("port lease lock %s is held by %s: still held after %s; if that process is stuck, end it, then try again", e.Path, who, e.Waited)
}

// lock takes this user's lease lock, waiting at most the store's
// LockWait (and never past ctx); it returns this user's subdirectory and
// the func that releases the lock. Lockers of one process queue for it
// in turn; when one of them waited the whole bound in vain, those queued
// behind it try once, so no caller waits much more than the bound.
func (l *Leases) lock(ctx context.Context) (string, func(), error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return "", nil, fmt.Errorf("lock port leases in %s: %w", l.dir, ctx.Err())
	}
	release := func() { <-l.sem }
	sub, err := l.own()
	if err != nil {
		release()
		return "", nil, err
	}
	path := filepath.Join(sub, lockName)
	f, err := openLockFile(path, l.me)
	if err != nil {
		release()
		return "", nil, fmt.Errorf("lock port leases: %w", err)
	}
	start := time.Now()
	wait := l.lockWait
	if last := l.busySince.Load(); last != 0 && start.Sub(time.Unix(0, last)) < l.lockWait {
		// This process's last locker waited the whole bound in vain a
		// moment ago: try once, and do not make every locker queued
		// behind it wait the bound again.
		wait = 0
	}
	step := 2 * time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			release()
			return "", nil, fmt.Errorf("lock port leases with %s: %w", path, err)
		}
		if ok {
			l.busySince.Store(0)
			return sub, func() {
				unlockFile(f)
				f.Close()
				release()
			}, nil
		}
		left := wait - time.Since(start)
		if left <= 0 {
			if wait > 0 {
				l.busySince.Store(time.Now().UnixNano())
			}
			pid, owner := lockHolder(f)
			f.Close()
			release()
			return "", nil, &LockBusyError{Path: path, Pid: pid, Owner: owner, Waited: l.lockWait}
		}
		t := time.NewTimer(min(step, left))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			release()
			return "", nil, fmt.Errorf("lock port leases with %s: %w", path, ctx.Err())
		case <-t.C:
		}
		step = min(step*2, 50*time.Millisecond)
	}
}
