package memtrim

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// Pacer lets the Go heap hold more garbage while the process is busy
// serving requests, and puts it back when it is quiet.
//
// A proxied request leaves about 9 KB of garbage, so at 20,000 requests a
// second a daemon whose live heap is 4 MiB would collect 40 times a second
// at GOGC=100; each collection's marking competes with the requests for
// the CPU and shows in the tail latency (benchmarks/README.md measured the
// daemon's p99 over direct at 0.88 of Caddy's with GOGC=100 and 0.66 with
// 400). While the rate stays above BusyRate the pacer sets GOGC to
// BusyPercent under a soft memory limit of BusyLimit, so a large heap
// collects sooner; once the rate has stayed below it for QuietFor it goes
// back to what the process started with. A GOGC or GOMEMLIMIT the user set
// in the environment is left alone.
type Pacer struct {
	// Count returns a running total of requests served.
	Count func() uint64

	BusyRate    float64       // requests a second; DefaultBusyRate when 0
	BusyPercent int           // DefaultBusyPercent when 0
	BusyLimit   int64         // bytes; DefaultBusyLimit when 0
	QuietFor    time.Duration // DefaultQuietFor when 0

	mu        sync.Mutex
	busy      bool
	last      uint64
	lastAt    time.Time
	quietFrom time.Time
	percent   int   // GOGC before the pacer raised it
	limit     int64 // the memory limit before
}

// Defaults for Pacer.
const (
	DefaultBusyRate    = 500
	DefaultBusyPercent = 400
	DefaultBusyLimit   = 64 << 20
	DefaultQuietFor    = 5 * time.Second
)

// userTuned reports whether the user set the collector's knobs themselves.
func userTuned() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// Check samples Count and switches between busy and quiet settings; it
// reports whether the pacer is busy after the sample. Run calls it every
// CheckEvery.
func (p *Pacer) Check(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.Count()
	if p.lastAt.IsZero() {
		p.last, p.lastAt = n, now
		return p.busy
	}
	dt := now.Sub(p.lastAt).Seconds()
	if dt <= 0 {
		return p.busy
	}
	rate := float64(n-p.last) / dt
	p.last, p.lastAt = n, now
	busyRate := p.BusyRate
	if busyRate == 0 {
		busyRate = DefaultBusyRate
	}
	switch {
	case rate >= busyRate:
		p.quietFrom = time.Time{}
		if !p.busy {
			p.setBusy(true)
		}
	case p.busy:
		if p.quietFrom.IsZero() {
			p.quietFrom = now
		}
		quiet := p.QuietFor
		if quiet == 0 {
			quiet = DefaultQuietFor
		}
		if now.Sub(p.quietFrom) >= quiet {
			p.setBusy(false)
		}
	}
	return p.busy
}

func (p *Pacer) setBusy(busy bool) {
	p.busy = busy
	if userTuned() {
		return
	}
	if busy {
		percent, limit := p.BusyPercent, p.BusyLimit
		if percent == 0 {
			percent = DefaultBusyPercent
		}
		if limit == 0 {
			limit = DefaultBusyLimit
		}
		p.percent = debug.SetGCPercent(percent)
		p.limit = debug.SetMemoryLimit(limit)
		return
	}
	debug.SetGCPercent(p.percent)
	if p.limit == 0 {
		p.limit = math.MaxInt64
	}
	debug.SetMemoryLimit(p.limit)
}

// CheckEvery is how often Run samples the request count: a load test's
// first second already runs with the busy settings.
const CheckEvery = 250 * time.Millisecond

// Run calls Check every CheckEvery until done closes, and restores the
// quiet settings when it returns.
func (p *Pacer) Run(done <-chan struct{}) {
	t := time.NewTicker(CheckEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			p.mu.Lock()
			if p.busy {
				p.setBusy(false)
			}
			p.mu.Unlock()
			return
		case now := <-t.C:
			p.Check(now)
		}
	}
}
