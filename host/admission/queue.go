package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The queue: Acquire waits for admission, Done and Release give a place
// back, and dispatch admits what the limits allow, in order. Suspension
// and resumption under pressure are controller.go's.

// ticket is an up waiting in the queue.
type ticket struct {
	key     string
	limits  Limits // the project's own bounds; the machine's are read at each decision
	resume  bool   // the world holds a suspended slot: admission resumes it
	waiters int    // callers waiting on it (two ups of one world share a ticket)
	reason  string
	limit   string        // which bound holds it, e.g. "machine.max_parallel"
	ready   chan struct{} // closed when admitted
	update  chan struct{} // position or reason changed
}

// Wait is what a queued caller is told: its place (1 is next) and why it
// waits.
type Wait struct {
	Position int
	Reason   string
	// Limit names the bound that holds it: "machine.max_parallel",
	// "project.max_parallel", "machine.ram_reserve", "project.ram_reserve",
	// "machine.disk_headroom", "project.disk_headroom", or "queue" for a
	// waiter that would fit but is behind one held by the machine.
	Limit string
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

func (c *Controller) findTicket(key string) int {
	return slices.IndexFunc(c.queue, func(t *ticket) bool { return t.key == key })
}

// Acquire admits the world key under lim (its project's own bounds; the
// machine's are read at every decision, so a `binky reserve` applies to
// waiters at once), or queues it until it can be, calling onWait with its
// position and reason whenever either changes. The queue is FIFO for the
// machine's bounds; a waiter held only by its own project's bounds does
// not hold back the worlds behind it. A world that already holds a slot is
// admitted at once; one that is suspended is resumed when RAM allows
// (resumed reports it), else queued. With noWait a world that cannot be
// admitted now fails with *Refused. A ctx that ends leaves the queue at
// once.
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
	c.queue = append(c.queue, t)
	admitted := c.dispatch() // admits t if it fits; sets the reasons
	in := slices.Contains(admitted, t)
	if !in && noWait {
		c.queue = slices.DeleteFunc(c.queue, func(q *ticket) bool { return q == t })
		r := t.reason
		c.mu.Unlock()
		closeAll(admitted)
		return false, &Refused{Key: key, Reason: r}
	}
	c.mu.Unlock()
	closeAll(admitted)
	if in {
		if t.resume {
			return true, c.resumeNow(key)
		}
		return false, nil
	}
	return c.await(ctx, t, onWait)
}

func closeAll(ts []*ticket) {
	for _, t := range ts {
		close(t.ready)
	}
}

// await waits for t to be admitted. A caller whose ctx ends leaves the
// queue (the ticket goes when its last waiter does); one admitted just as
// it left gives its use back.
func (c *Controller) await(ctx context.Context, t *ticket, onWait func(Wait)) (bool, error) {
	last := Wait{}
	report := func() {
		c.mu.Lock()
		w := Wait{Position: slices.Index(c.queue, t) + 1, Reason: t.reason, Limit: t.limit}
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
	if max(c.opts.Limits().RAMReserve, t.limits.RAMReserve) > 0 {
		c.sinceFresh++
	}
	if sl := c.find(t.key); sl != nil {
		sl.suspended, sl.lastActive = "", now
		sl.busy += t.waiters
		return
	}
	c.slots = append(c.slots, &slot{key: t.key, admitted: now, lastActive: now, busy: t.waiters})
}

// verdict is why a ticket cannot be admitted now: the reason shown, the
// bound that holds it, and whether that bound is the machine's (a ticket
// held by the machine holds back everything behind it; one held by its
// own project's bounds does not).
type verdict struct {
	reason, limit string
	machine       bool
}

// judge says why t cannot be admitted now (a zero verdict when it can),
// against the machine's bounds as they are now and its project's own.
// The machine's max_parallel counts every world; the project's counts
// that project's worlds only. c.mu held.
func (c *Controller) judge(t *ticket) verdict {
	m, own := c.opts.Limits(), t.limits
	proj := projectOf(t.key)
	running, mine := 0, 0
	for _, sl := range c.slots {
		if sl.key == t.key {
			continue // a suspended world already holds its place
		}
		running++
		if projectOf(sl.key) == proj {
			mine++
		}
	}
	s := c.sample
	machine := func(r, l string) verdict { return verdict{r + " (machine)", "machine." + l, true} }
	project := func(r, l string) verdict { return verdict{r + " (project " + proj + ")", "project." + l, false} }
	if m.MaxParallel > 0 && running >= m.MaxParallel {
		return machine(fmt.Sprintf("max_parallel %d reached", m.MaxParallel), "max_parallel")
	}
	if own.MaxParallel > 0 && mine >= own.MaxParallel {
		return project(fmt.Sprintf("max_parallel %d reached", own.MaxParallel), "max_parallel")
	}
	free := s.RAMFreePct()
	ram := func(reserve float64) string {
		return fmt.Sprintf("free RAM %s%% < reserve %s%%", num(free, 0), num(reserve, 0))
	}
	if s.MemTotal > 0 {
		if m.RAMReserve > 0 && free < m.RAMReserve {
			return machine(ram(m.RAMReserve), "ram_reserve")
		}
		if own.RAMReserve > 0 && free < own.RAMReserve {
			return project(ram(own.RAMReserve), "ram_reserve")
		}
	}
	if s.DiskTotal > 0 {
		disk := func(h float64) string {
			return fmt.Sprintf("free disk %s GB < headroom %s GB", num(s.DiskFreeGB(), 1), num(h, 1))
		}
		if m.DiskHeadroom > 0 && s.DiskFreeGB() < m.DiskHeadroom {
			return machine(disk(m.DiskHeadroom), "disk_headroom")
		}
		if own.DiskHeadroom > 0 && s.DiskFreeGB() < own.DiskHeadroom {
			return project(disk(own.DiskHeadroom), "disk_headroom")
		}
	}
	reserve := max(m.RAMReserve, own.RAMReserve)
	if reserve <= 0 || s.MemTotal == 0 {
		return verdict{}
	}
	if !t.resume {
		if n := c.countSuspended(WhyPressure); n > 0 {
			return machine(fmt.Sprintf("%d world(s) suspended for RAM resume first", n), "ram_reserve")
		}
	}
	// Near the reserve, admit one world per sample so each one's memory
	// shows before the next is let in.
	if c.sinceFresh > 0 && free < reserve+c.opts.Hysteresis {
		r := fmt.Sprintf("free RAM %s%% is near reserve %s%%: one world per sample", num(free, 0), num(reserve, 0))
		if free < m.RAMReserve+c.opts.Hysteresis {
			return machine(r, "ram_reserve")
		}
		return project(r, "ram_reserve")
	}
	return verdict{}
}

// projectOf is the project part of a world key.
func projectOf(key string) string {
	p, _, _ := strings.Cut(key, "/")
	return p
}

// dispatch admits the tickets that fit, in order, sets the reasons of
// those left and tells each waiter. The first ticket held by a machine
// bound stops admission behind it (FIFO); one held only by its project's
// bounds is passed over. It returns the admitted tickets, whose ready
// channels the caller closes after unlocking. c.mu held.
func (c *Controller) dispatch() []*ticket {
	var admitted []*ticket
	var block *verdict
	left := make([]*ticket, 0, len(c.queue))
	for _, t := range c.queue {
		v := c.judge(t)
		if v.reason == "" && block == nil {
			c.admit(t)
			admitted = append(admitted, t)
			continue
		}
		if v.reason == "" {
			v = verdict{reason: block.reason, limit: "queue"} // fits, but FIFO: it waits behind the machine's head
		} else if v.machine && block == nil {
			block = &v
		}
		t.reason, t.limit = v.reason, v.limit
		left = append(left, t)
	}
	c.queue = left
	for _, t := range left {
		select {
		case t.update <- struct{}{}:
		default:
		}
	}
	return admitted
}

// Recheck re-evaluates every waiter against the bounds as they are now
// (`binky reserve` changed them) and admits what fits.
func (c *Controller) Recheck() {
	c.mu.Lock()
	admitted := c.dispatch()
	jobs := c.dispatchJobs()
	c.mu.Unlock()
	closeAll(admitted)
	closeJobs(jobs)
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
