package memtrim

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Result says what a Trim handed back.
type Result struct {
	// Mappings is how many read-only mappings of the executable were
	// dropped; ImageBytes is their total size (not all of it was resident).
	Mappings   int
	ImageBytes uint64
	// Took is how long the trim ran.
	Took time.Duration
}

// Trim returns the Go heap's free pages to the system and, where the
// platform allows, drops the process's idle mappings of its own executable.
// An error means the executable's mappings could not be read or dropped;
// the heap was trimmed all the same.
func Trim() (Result, error) {
	start := time.Now()
	debug.FreeOSMemory()
	r, err := trimImage()
	r.Took = time.Since(start)
	return r, err
}

// Idle runs a trim once the process has been quiet for a spell: no call in
// flight (Begin/End) and no activity (Touch) for After. It trims once per
// burst of activity, and once after the first quiet spell from Start.
type Idle struct {
	after    time.Duration
	trim     func()
	inflight atomic.Int32
	last     atomic.Int64 // unix nanoseconds of the last activity
	extra    func() time.Time

	mu      sync.Mutex
	trimmed int64 // the value of last at the last trim; -1 before the first
}

// NewIdle returns an Idle that calls trim once the process has been quiet
// for after. extra, when non-nil, reports activity Idle does not see
// (such as the proxy's last request); its latest time counts as activity.
func NewIdle(after time.Duration, trim func(), extra func() time.Time) *Idle {
	i := &Idle{after: after, trim: trim, extra: extra, trimmed: -1}
	i.last.Store(time.Now().UnixNano())
	return i
}

// Begin marks a call in flight; End marks it done.
func (i *Idle) Begin() { i.inflight.Add(1); i.Touch() }

// End marks a call done (see Begin).
func (i *Idle) End() { i.Touch(); i.inflight.Add(-1) }

// Touch records activity now.
func (i *Idle) Touch() { i.last.Store(time.Now().UnixNano()) }

// lastActivity is the latest of Touch and extra.
func (i *Idle) lastActivity() int64 {
	last := i.last.Load()
	if i.extra != nil {
		if t := i.extra(); !t.IsZero() && t.UnixNano() > last {
			last = t.UnixNano()
		}
	}
	return last
}

// Check trims if the process has been quiet for After since activity that
// came after the last trim. It reports whether it trimmed.
func (i *Idle) Check(now time.Time) bool {
	if i.inflight.Load() > 0 {
		return false
	}
	last := i.lastActivity()
	if now.UnixNano()-last < int64(i.after) {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.trimmed == last {
		return false // nothing happened since the last trim
	}
	i.trimmed = last
	i.trim()
	return true
}

// Run calls Check every After/4 (at least every second) until done closes.
func (i *Idle) Run(done <-chan struct{}) {
	every := max(i.after/4, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			i.Check(now)
		}
	}
}
