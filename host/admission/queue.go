package admission

import (
	"context"
	"fmt"
	"slices"
)

// The queue: Acquire waits for admission, Done and Release give a place
// back, and dispatch admits what the limits allow, in order. Suspension
// and resumption under pressure are controller.go's.

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
