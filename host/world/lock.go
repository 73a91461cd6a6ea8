package world

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Lock serializes the operations on one world (or the git worktree changes
// of one repository). Unlike a sync.Mutex, a wait for it ends with the
// waiter's context, and it knows who holds it, so a waiter is told what it
// waits for ("waiting for the up of feat-a started 40 s ago"). The zero
// Lock is free. Safe from many goroutines.
type Lock struct {
	mu     sync.Mutex
	held   bool
	holder Holder
	// freed is closed when the lock is released; made by the first waiter
	// of each hold, so a hold nobody waits for allocates nothing.
	freed chan struct{}
}

// Holder is the operation that holds a Lock.
type Holder struct {
	Op    string    // what it does: "up", "down", "remove", "suspend"…
	What  string    // what it does it to: a world's name
	Since time.Time // when it took the lock
}

// WaitingFor is the progress line a waiter shows: "waiting for the up of
// feat-a started 40 s ago".
func (h Holder) WaitingFor(now time.Time) string {
	return "waiting for the " + h.Op + " of " + h.What + " started " + ago(now.Sub(h.Since)) + " ago"
}

// ago is d for a person: "40 s", "3 min", "2 h 5 min".
func ago(d time.Duration) string {
	switch s := int(d / time.Second); {
	case s < 60:
		return fmt.Sprintf("%d s", max(s, 0))
	case s < 3600:
		return fmt.Sprintf("%d min", s/60)
	default:
		return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
	}
}

// Lock takes l for op on what. While another holds it, s (nil: nobody to
// tell) gets a progress line naming the holder, again whenever the holder
// changes; the wait ends without the lock when ctx ends, the error naming
// what it waited for. (A wait that should end when the caller hangs up
// takes UntilGone's context.)
func (l *Lock) Lock(ctx context.Context, s Progress, op, what string) error {
	var told Holder
	for {
		l.mu.Lock()
		if !l.held {
			l.held, l.holder = true, Holder{Op: op, What: what, Since: time.Now()}
			l.mu.Unlock()
			return nil
		}
		if l.freed == nil {
			l.freed = make(chan struct{})
		}
		freed, h := l.freed, l.holder
		l.mu.Unlock()
		if s != nil && h != told {
			s.Progress("lock", "", h.WaitingFor(time.Now()))
			told = h
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return fmt.Errorf("stopped %s: %w", h.WaitingFor(time.Now()), context.Cause(ctx))
		}
	}
}

// TryLock takes l for op on what if it is free, and reports whether it did.
func (l *Lock) TryLock(op, what string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return false
	}
	l.held, l.holder = true, Holder{Op: op, What: what, Since: time.Now()}
	return true
}

// Unlock releases l and wakes its waiters. Unlocking a free Lock is a bug
// and panics, as sync.Mutex's does.
func (l *Lock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		panic("world: unlock of an unlocked Lock")
	}
	l.held, l.holder = false, Holder{}
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

// Holder is who holds l, and whether anyone does.
func (l *Lock) Holder() (Holder, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder, l.held
}

// KeyedLocks hands out one lock of type L per key, made on first use
// (a sync.Mutex, a Lock).
type KeyedLocks[L any] struct {
	mu sync.Mutex
	m  map[string]*L
}

// Get is key's lock.
func (k *KeyedLocks[L]) Get(key string) *L {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*L{}
	}
	l, ok := k.m[key]
	if !ok {
		l = new(L)
		k.m[key] = l
	}
	return l
}
