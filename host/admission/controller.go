package admission

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults for Options.
const (
	DefaultInterval   = time.Second
	DefaultSuspendGap = 10 * time.Second
)

// Why a world is suspended.
const (
	WhyPressure = "pressure" // free RAM fell below the reserve
	WhyIdle     = "idle"     // idle_suspend: no request and no CPU for that long
)

// Options configure a Controller. Source and Limits are required.
type Options struct {
	Source Source
	// Limits returns the machine-wide bounds (the registry's, or the
	// defaults); read at every decision, so `binky reserve` applies at once.
	Limits func() Limits
	// Interval is how often pressure is sampled; DefaultInterval if 0.
	Interval time.Duration
	// Hysteresis is the percentage points above the RAM reserve free RAM
	// must reach before a pressure-suspended world resumes;
	// DefaultHysteresis if 0.
	Hysteresis float64
	// SuspendGap is the least time between two pressure decisions (a
	// suspension or a resume), so the effect of one is sampled before the
	// next; DefaultSuspendGap if 0.
	SuspendGap time.Duration
	// Suspend and Resume stop and continue a world's processes. They are
	// called without the controller's lock held.
	Suspend, Resume func(key string) error
	// CPUTime returns the CPU time a world's processes have used so far;
	// nil or false means unknown (idle is then judged by requests alone).
	CPUTime func(key string) (time.Duration, bool)
	// Activity reports the connections open now to a world's proxied
	// routes (WebSockets and event streams until they close) and when
	// the last of them closed. A world with one open is not idle; its
	// idle time counts from that close. nil: requests alone (Touch).
	Activity func(key string) (open int, ended time.Time)
	// Live reports whether a world has a live process; suspension passes
	// over one that has none (stopping nothing frees nothing). nil: all do.
	Live func(key string) bool
	// Jobs is the machine's bound on commands running at once (binky run,
	// verify checks); the cores when 0.
	Jobs int
	// Now is the clock; time.Now if nil.
	Now    func() time.Time
	Logger hclog.Logger
}

// Controller is the admission queue and the suspend/resume policy of one
// daemon. Worlds are named by key ("project/worktree").
type Controller struct {
	opts Options
	kick chan struct{}

	mu         sync.Mutex
	sample     Sample
	sampled    bool
	sampleErr  error
	sinceFresh int // worlds admitted on RAM since the last sample
	slots      []*slot
	queue      []*ticket
	lastMove   time.Time // last pressure suspension or resume

	// The jobs queue (jobs.go).
	jobq           []*job
	jobsRunning    int
	jobsOf         map[string]int // running jobs per project
	connsOn        map[string]int // connections running jobs are counted for, per server
	jobsSinceFresh int            // jobs started since the last sample and still running
	sampleGen      uint64         // samples taken: a fresh job's generation
}

// slot is a world holding one of the max_parallel places.
type slot struct {
	key         string
	admitted    time.Time
	suspended   string // "", WhyPressure or WhyIdle
	suspendedAt time.Time
	idle        time.Duration // idle_suspend; 0: never
	lastActive  time.Time
	cpu         time.Duration
	busy        int // callers (an up, a wake) using the world right now
}

// New returns a controller; Run samples pressure until its context ends.
func New(opts Options) *Controller {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Hysteresis <= 0 {
		opts.Hysteresis = DefaultHysteresis
	}
	if opts.SuspendGap <= 0 {
		opts.SuspendGap = DefaultSuspendGap
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Suspend == nil {
		opts.Suspend = func(string) error { return errors.New("suspend is not wired") }
	}
	if opts.Resume == nil {
		opts.Resume = func(string) error { return errors.New("resume is not wired") }
	}
	return &Controller{opts: opts, kick: make(chan struct{}, 1)}
}

// Run samples pressure every Interval (and at once after Kick), applies the
// suspend/resume policy and admits what the queue can, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		c.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.kick:
		}
	}
}

// Kick asks Run for a fresh sample now (memory may just have been freed).
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Tick takes one sample and acts on it: idle suspension, one pressure
// suspension or resume at most, then the queue.
func (c *Controller) Tick(ctx context.Context) {
	s, err := c.opts.Source.Sample(ctx)
	c.mu.Lock()
	c.sampleErr = err
	if err == nil || !c.sampled {
		c.sample, c.sampled = s, true
	}
	c.sinceFresh, c.jobsSinceFresh = 0, 0
	c.sampleGen++
	now := c.opts.Now()
	var suspend, resume []string
	var why []string
	// Idle: no request, no connection open and no CPU for its
	// idle_suspend.
	for _, sl := range c.slots {
		if sl.suspended != "" || sl.idle <= 0 || sl.busy > 0 {
			continue
		}
		if c.opts.Activity != nil {
			open, ended := c.opts.Activity(sl.key)
			if open > 0 {
				sl.lastActive = now
				continue
			}
			if ended.After(sl.lastActive) {
				sl.lastActive = ended
			}
		}
		if c.opts.CPUTime != nil {
			if cpu, ok := c.opts.CPUTime(sl.key); ok && cpu != sl.cpu {
				sl.cpu, sl.lastActive = cpu, now
				continue
			}
		}
		if now.Sub(sl.lastActive) >= sl.idle {
			sl.suspended, sl.suspendedAt = WhyIdle, now
			suspend, why = append(suspend, sl.key), append(why, WhyIdle)
		}
	}
	// Pressure: one move per SuspendGap, so its effect shows in a sample
	// before the next; the oldest running world is never suspended.
	lim := c.opts.Limits()
	if lim.RAMReserve > 0 && c.sample.MemTotal > 0 && now.Sub(c.lastMove) >= c.opts.SuspendGap {
		free := c.sample.RAMFreePct()
		switch {
		case free < lim.RAMReserve:
			if sl := c.newestRunning(); sl != nil {
				sl.suspended, sl.suspendedAt = WhyPressure, now
				suspend, why = append(suspend, sl.key), append(why, WhyPressure)
				c.lastMove = now
			}
		case free >= lim.RAMReserve+c.opts.Hysteresis:
			if sl := c.longestSuspended(WhyPressure); sl != nil {
				sl.suspended = ""
				sl.lastActive = now
				resume = append(resume, sl.key)
				c.lastMove = now
			}
		}
	}
	admitted := c.dispatch()
	jobs := c.dispatchJobs()
	c.mu.Unlock()
	closeJobs(jobs)
	for i, k := range suspend {
		if err := c.opts.Suspend(k); err != nil {
			c.opts.Logger.Warn("suspend world", "world", k, "why", why[i], "error", err)
			c.mu.Lock()
			if sl := c.find(k); sl != nil {
				sl.suspended = ""
			}
			c.mu.Unlock()
		}
	}
	for _, k := range resume {
		if err := c.opts.Resume(k); err != nil {
			c.opts.Logger.Warn("resume world", "world", k, "error", err)
		}
	}
	for _, t := range admitted {
		close(t.ready)
	}
}

// newestRunning is the most recently admitted world that runs, has a live
// process and is not in use by a caller, unless it is the only one
// running.
func (c *Controller) newestRunning() *slot {
	var running []*slot
	for _, sl := range c.slots {
		if sl.suspended == "" {
			running = append(running, sl)
		}
	}
	if len(running) < 2 {
		return nil
	}
	for i := len(running) - 1; i >= 1; i-- {
		if running[i].busy == 0 && (c.opts.Live == nil || c.opts.Live(running[i].key)) {
			return running[i]
		}
	}
	return nil
}

// longestSuspended is the world suspended (for why) the longest.
func (c *Controller) longestSuspended(why string) *slot {
	var best *slot
	for _, sl := range c.slots {
		if sl.suspended == why && (best == nil || sl.suspendedAt.Before(best.suspendedAt)) {
			best = sl
		}
	}
	return best
}

func (c *Controller) find(key string) *slot {
	for _, sl := range c.slots {
		if sl.key == key {
			return sl
		}
	}
	return nil
}

func (c *Controller) countSuspended(why string) int {
	n := 0
	for _, sl := range c.slots {
		if sl.suspended == why {
			n++
		}
	}
	return n
}

// Hold records a world that already runs (found by a restarted daemon), in
// admission order, suspended when its recorded state says so.
func (c *Controller) Hold(key string, suspended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.find(key) != nil {
		return
	}
	now := c.opts.Now()
	sl := &slot{key: key, admitted: now, lastActive: now}
	if suspended {
		sl.suspended, sl.suspendedAt = WhyPressure, now
	}
	c.slots = append(c.slots, sl)
}

// SetIdle sets a world's idle_suspend (0: never).
func (c *Controller) SetIdle(key string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl := c.find(key); sl != nil {
		sl.idle = d
	}
}

// Touch records activity on a world (a proxied request).
func (c *Controller) Touch(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl := c.find(key); sl != nil {
		sl.lastActive = c.opts.Now()
	}
}

// Suspended reports whether key holds a suspended slot, and why.
func (c *Controller) Suspended(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl := c.find(key); sl != nil && sl.suspended != "" {
		return sl.suspended, true
	}
	return "", false
}
