package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// ticket is an up waiting in the queue.
type ticket struct {
	key     string
	limits  Limits
	resume  bool // the world holds a suspended slot: admission resumes it
	waiters int  // callers waiting on it (two ups of one world share a ticket)
	reason  string
	ready   chan struct{} // closed when admitted
	update  chan struct{} // position or reason changed
}

// Wait is what a queued caller is told: its place (1 is next) and why it
// waits.
type Wait struct {
	Position int
	Reason   string
}

// Refused is Acquire's error for a world that cannot be admitted now when
// the caller would not wait.
type Refused struct {
	Key    string
	Reason string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("%s cannot start now: %s", e.Key, e.Reason)
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
	c.sinceFresh = 0
	now := c.opts.Now()
	var suspend, resume []string
	var why []string
	// Idle: no request and no CPU for its idle_suspend.
	for _, sl := range c.slots {
		if sl.suspended != "" || sl.idle <= 0 || sl.busy > 0 {
			continue
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
	c.mu.Unlock()
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

// newestRunning is the most recently admitted world that runs and is not
// in use by a caller, unless it is the only one running.
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
		if running[i].busy == 0 {
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

func (c *Controller) findTicket(key string) int {
	return slices.IndexFunc(c.queue, func(t *ticket) bool { return t.key == key })
}

// Acquire admits the world key under lim (the machine's limits lowered by
// its project's), or queues it in FIFO order until it can be, calling
// onWait with its position and reason whenever either changes. A world
// that already holds a slot is admitted at once; one that is suspended is
// resumed when RAM allows (resumed reports it), else queued. With noWait a
// world that cannot be admitted now fails with *Refused. A ctx that ends
// leaves the queue cleanly.
func (c *Controller) Acquire(ctx context.Context, key string, lim Limits, noWait bool, onWait func(Wait)) (resumed bool, err error) {
	c.mu.Lock()
	if !c.sampled {
		c.mu.Unlock()
		c.Tick(ctx) // the first caller takes the first sample
		c.mu.Lock()
	}
	t := &ticket{key: key, limits: lim, waiters: 1, ready: make(chan struct{}), update: make(chan struct{}, 1)}
	if sl := c.find(key); sl != nil {
		if sl.suspended == "" {
			sl.busy++
			c.mu.Unlock()
			return false, nil
		}
		t.resume = true
	}
	if i := c.findTicket(key); i >= 0 {
		// A second up of a queued world waits with the first.
		other := c.queue[i]
		other.waiters++
		c.mu.Unlock()
		return c.await(ctx, other, onWait)
	}
	if len(c.queue) == 0 {
		if r := c.reasonFor(t); r == "" {
			c.admit(t)
			c.mu.Unlock()
			if t.resume {
				return true, c.resumeNow(key)
			}
			return false, nil
		}
	}
	c.queue = append(c.queue, t)
	c.dispatch() // sets the reasons
	if noWait {
		c.queue = slices.DeleteFunc(c.queue, func(q *ticket) bool { return q == t })
		r := t.reason
		c.mu.Unlock()
		return false, &Refused{Key: key, Reason: r}
	}
	c.mu.Unlock()
	return c.await(ctx, t, onWait)
}

// await waits for t to be admitted. A caller whose ctx ends leaves the
// queue (the ticket goes when its last waiter does); one admitted just as
// it left gives its use back.
func (c *Controller) await(ctx context.Context, t *ticket, onWait func(Wait)) (bool, error) {
	last := Wait{}
	report := func() {
		c.mu.Lock()
		w := Wait{Position: slices.Index(c.queue, t) + 1, Reason: t.reason}
		c.mu.Unlock()
		if w.Position > 0 && w != last && onWait != nil {
			onWait(w)
		}
		last = w
	}
	report()
	for {
		select {
		case <-t.ready:
			if t.resume {
				return true, c.resumeNow(t.key)
			}
			return false, nil
		case <-t.update:
			report()
		case <-ctx.Done():
			c.mu.Lock()
			t.waiters--
			select {
			case <-t.ready: // admitted just now: give the use back
				if sl := c.find(t.key); sl != nil {
					sl.busy--
					if sl.busy <= 0 && !t.resume {
						c.releaseLocked(t.key)
					}
				}
			default:
				if t.waiters == 0 {
					c.queue = slices.DeleteFunc(c.queue, func(q *ticket) bool { return q == t })
				}
			}
			admitted := c.dispatch()
			c.mu.Unlock()
			for _, a := range admitted {
				close(a.ready)
			}
			return false, fmt.Errorf("left the queue for %s: %w", t.key, ctx.Err())
		}
	}
}

func (c *Controller) resumeNow(key string) error {
	if err := c.opts.Resume(key); err != nil {
		c.mu.Lock()
		if sl := c.find(key); sl != nil {
			sl.busy--
		}
		c.mu.Unlock()
		return fmt.Errorf("resume %s: %w", key, err)
	}
	return nil
}

// admit gives t its slot (or un-suspends the one it holds). c.mu held.
func (c *Controller) admit(t *ticket) {
	now := c.opts.Now()
	if t.limits.RAMReserve > 0 {
		c.sinceFresh++
	}
	if sl := c.find(t.key); sl != nil {
		sl.suspended, sl.lastActive = "", now
		sl.busy += t.waiters
		return
	}
	c.slots = append(c.slots, &slot{key: t.key, admitted: now, lastActive: now, busy: t.waiters})
}

// reasonFor says why t cannot be admitted now ("" when it can). c.mu held.
func (c *Controller) reasonFor(t *ticket) string {
	running := len(c.slots)
	if t.resume {
		running-- // it already holds its place
	}
	if r := Reason(t.limits, c.sample, running); r != "" {
		return r
	}
	if t.limits.RAMReserve <= 0 || c.sample.MemTotal == 0 {
		return ""
	}
	if !t.resume {
		if n := c.countSuspended(WhyPressure); n > 0 {
			return fmt.Sprintf("%d world(s) suspended for RAM resume first", n)
		}
	}
	// Near the reserve, admit one world per sample so each one's memory
	// shows before the next is let in.
	free := c.sample.RAMFreePct()
	if free < t.limits.RAMReserve+c.opts.Hysteresis && c.sinceFresh > 0 {
		return fmt.Sprintf("free RAM %s%% is near reserve %s%%: one world per sample", num(free, 0), num(t.limits.RAMReserve, 0))
	}
	return ""
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

// dispatch admits tickets from the head of the queue while they fit, sets
// the reasons of those left and tells each waiter. It returns the admitted
// tickets, whose ready channels the caller closes after unlocking. c.mu
// held.
func (c *Controller) dispatch() []*ticket {
	var admitted []*ticket
	for len(c.queue) > 0 {
		t := c.queue[0]
		if r := c.reasonFor(t); r != "" {
			break
		}
		c.admit(t)
		c.queue = c.queue[1:]
		admitted = append(admitted, t)
	}
	head := ""
	for i, t := range c.queue {
		r := c.reasonFor(t)
		if i == 0 {
			head = r
		}
		if r == "" {
			r = head // fits, but FIFO: it waits behind the head
		}
		t.reason = r
		select {
		case t.update <- struct{}{}:
		default:
		}
	}
	return admitted
}

// Done ends one caller's use of a world admitted by Acquire (the up
// finished, either way); the world keeps its slot until Release.
func (c *Controller) Done(key string) {
	c.mu.Lock()
	if sl := c.find(key); sl != nil && sl.busy > 0 {
		sl.busy--
		sl.lastActive = c.opts.Now()
	}
	c.mu.Unlock()
}

// Release gives up a world's slot (it went down, was removed, or its up
// failed) and admits what now fits.
func (c *Controller) Release(key string) {
	c.mu.Lock()
	c.releaseLocked(key)
	admitted := c.dispatch()
	c.mu.Unlock()
	for _, t := range admitted {
		close(t.ready)
	}
	c.Kick()
}

func (c *Controller) releaseLocked(key string) {
	c.slots = slices.DeleteFunc(c.slots, func(sl *slot) bool { return sl.key == key })
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
