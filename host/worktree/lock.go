package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockName is the file, in the repository's git directory, that binky locks
// around worktree changes. Concurrent `git worktree add` and `remove` calls
// are not safe in git itself (one reads another's half-written entry, or
// both lock .git/config), so changes take it exclusively and listings
// share it. It is an OS lock on an open file, released when the process
// ends, so a crash never leaves it held.
const lockName = "binky-worktrees.lock"

// lockRetry is how often a held lock is tried again.
const lockRetry = 10 * time.Millisecond

// lock takes the repository's worktree lock, shared or exclusive, waiting
// until it is free or ctx ends, and returns its release.
func (r *Repo) lock(ctx context.Context, exclusive bool) (func(), error) {
	path := filepath.Join(r.CommonDir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open worktree lock %s: %w", path, err)
	}
	for {
		ok, err := tryLock(f, exclusive)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return func() { unlock(f); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for worktree lock %s: %w", path, ctx.Err())
		case <-time.After(lockRetry):
		}
	}
}
