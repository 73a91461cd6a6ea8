package memtrim

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// Busy is what a process that serves requests (the daemon's proxy) tells
// the trim about them: a running total of requests served, and when the
// last one came.
type Busy interface {
	Served() uint64
	LastRequest() time.Time
}

// Start hands back, once the process has been quiet for after, the memory
// its start and its last burst of work touched and no longer use (Trim),
// until done is closed: most of an idle daemon's resident set is its own
// binary image, mapped page by fault-around page. While busy (nil: none)
// serves requests the heap may hold more garbage (Pacer): fewer
// collections, a shorter latency tail. It returns the Idle whose Begin and
// End mark the calls in flight; nil when after is negative (never trims).
func Start(done <-chan struct{}, after time.Duration, busy Busy, log hclog.Logger) *Idle {
	var last func() time.Time
	if busy != nil {
		pacer := &Pacer{Count: busy.Served}
		go pacer.Run(done)
		last = busy.LastRequest
	}
	if after < 0 {
		return nil
	}
	idle := NewIdle(after, func() {
		r, err := Trim()
		if err != nil {
			log.Warn("trim memory", "error", err)
			return
		}
		log.Debug("trimmed memory", "mappings", r.Mappings, "image_bytes", r.ImageBytes, "took", r.Took)
	}, last)
	go idle.Run(done)
	return idle
}
