package admission

// Queued is one world waiting in the queue.
type Queued struct {
	Key      string
	Position int // 1 is next
	Reason   string
	Limit    string // the bound that holds it (Wait.Limit)
}

// Held is one world holding a slot.
type Held struct {
	Key       string
	Suspended string // "", WhyPressure or WhyIdle
}

// Snapshot is the controller's state, for status.
type Snapshot struct {
	Sample Sample
	// SampleErr is the last sample's failure ("" when it worked).
	SampleErr string
	Limits    Limits
	Queue     []Queued
	Slots     []Held
}

// Snapshot returns the queue, the slots and the last sample.
func (c *Controller) Snapshot() Snapshot {
	lim := c.opts.Limits()
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Snapshot{Sample: c.sample, Limits: lim}
	if c.sampleErr != nil {
		s.SampleErr = c.sampleErr.Error()
	}
	for i, t := range c.queue {
		s.Queue = append(s.Queue, Queued{Key: t.key, Position: i + 1, Reason: t.reason, Limit: t.limit})
	}
	for _, sl := range c.slots {
		s.Slots = append(s.Slots, Held{Key: sl.key, Suspended: sl.suspended})
	}
	return s
}

// Queued reports key's place in the queue, if it waits there.
func (c *Controller) Queued(key string) (Queued, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := c.findTicket(key); i >= 0 {
		return Queued{Key: key, Position: i + 1, Reason: c.queue[i].reason, Limit: c.queue[i].limit}, true
	}
	return Queued{}, false
}
