package admission

import (
	"context"
	"fmt"
	"runtime"
	"slices"
)

// The jobs queue: heavy commands (`binky run`, verify checks) wait here,
// FIFO, for one of the machine's job places (Options.Jobs, its cores by
// default) and their project's ([admission] jobs), and while free RAM is
// below the reserve. It shares the worlds' sample and lock, so a sample
// that frees RAM admits both queues.

// JobLimits bound one project's jobs; a zero field means the machine's.
// A journaled binky run records its own (host/world), so the daemon that
// takes it over counts it for the same: hence the JSON names.
type JobLimits struct {
	Jobs       int     `json:"jobs,omitempty"`        // this project's jobs at once
	RAMReserve float64 `json:"ram_reserve,omitempty"` // percent of RAM that must stay free
	// Servers are the database servers of the job's world's slices (as
	// golden.Server names them); every running job is counted for
	// Connections on each of its servers. A job whose project sets
	// ConnBound (zero: none) waits while the jobs running on one of its
	// servers are counted for more than ConnBound with it, unless none
	// run there (a job alone always starts).
	Servers     []string `json:"servers,omitempty"`
	Connections int      `json:"connections,omitempty"`
	ConnBound   int      `json:"connections_bound,omitempty"`
}

// job is a command waiting for, or holding, a job place.
type job struct {
	project string
	limits  JobLimits
	reason  string
	limit   string
	running bool
	// fresh: started since the last sample (counted in jobsSinceFresh,
	// at the sample generation gen), so its memory is not in the sample.
	fresh  bool
	gen    uint64
	ready  chan struct{}
	update chan struct{}
}

// MachineJobs is the machine's job bound: Options.Jobs, or the cores.
func (c *Controller) MachineJobs() int {
	if c.opts.Jobs > 0 {
		return c.opts.Jobs
	}
	return runtime.NumCPU()
}

// Job waits, FIFO, until a command of project may run under lim and the
// machine's job bound and RAM reserve, calling onWait with its position
// and reason whenever either changes. It returns release, which gives the
// place back (call it once the command ends). A ctx that ends leaves the
// queue at once.
func (c *Controller) Job(ctx context.Context, project string, lim JobLimits, onWait func(Wait)) (release func(), err error) {
	c.mu.Lock()
	if !c.sampled {
		c.mu.Unlock()
		c.Tick(ctx)
		c.mu.Lock()
	}
	j := &job{project: project, limits: lim, ready: make(chan struct{}), update: make(chan struct{}, 1)}
	c.jobq = append(c.jobq, j)
	admitted := c.dispatchJobs()
	c.mu.Unlock()
	closeJobs(admitted)
	release = func() { c.endJob(j) }
	last := Wait{}
	for {
		c.mu.Lock()
		w := Wait{Position: slices.Index(c.jobq, j) + 1, Reason: j.reason, Limit: j.limit}
		c.mu.Unlock()
		if w.Position > 0 && w != last && onWait != nil {
			onWait(w)
		}
		last = w
		select {
		case <-j.ready:
			return release, nil
		case <-j.update:
		case <-ctx.Done():
			c.mu.Lock()
			select {
			case <-j.ready: // admitted just now: give the place back below
			default:
				c.jobq = slices.DeleteFunc(c.jobq, func(q *job) bool { return q == j })
			}
			c.mu.Unlock()
			c.endJob(j)
			return nil, fmt.Errorf("left the jobs queue: %w", ctx.Err())
		}
	}
}

// Adopt counts a command that already runs (a journaled binky run a
// restarted daemon took over) as a running job of project under lim, at
// once and whatever the bounds: it holds its job place and its
// connections on lim.Servers until release, so the jobs queued behind it
// wait for it as for any other. Its memory is in the next sample already,
// so it is not counted as fresh.
func (c *Controller) Adopt(project string, lim JobLimits) (release func()) {
	j := &job{project: project, limits: lim, ready: make(chan struct{}), update: make(chan struct{}, 1)}
	c.mu.Lock()
	c.countJob(j)
	c.mu.Unlock()
	return func() { c.endJob(j) }
}

// endJob gives a running job's place back and admits what now fits.
func (c *Controller) endJob(j *job) {
	c.mu.Lock()
	if j.running {
		j.running = false
		c.jobsRunning--
		// A job whose memory no sample has seen is gone with it: near the
		// reserve, the place it frees is taken at once, not at the next
		// sample (one unmeasured job at a time still holds).
		if j.fresh && j.gen == c.sampleGen && c.jobsSinceFresh > 0 {
			c.jobsSinceFresh--
		}
		c.jobsOf[j.project]--
		for _, srv := range j.limits.Servers {
			if c.connsOn[srv] -= j.limits.Connections; c.connsOn[srv] <= 0 {
				delete(c.connsOn, srv)
			}
		}
	}
	admitted := c.dispatchJobs()
	c.mu.Unlock()
	closeJobs(admitted)
}

func closeJobs(js []*job) {
	for _, j := range js {
		close(j.ready)
	}
}

// judgeJob says why j cannot start now (a zero verdict when it can).
// c.mu held.
func (c *Controller) judgeJob(j *job) verdict {
	m := c.opts.Limits()
	machine := func(r, l string) verdict { return verdict{r + " (machine)", "machine." + l, true} }
	project := func(r, l string) verdict {
		return verdict{r + " (project " + j.project + ")", "project." + l, false}
	}
	if n := c.MachineJobs(); c.jobsRunning >= n {
		return machine(fmt.Sprintf("jobs %d running", n), "jobs")
	}
	if j.limits.Jobs > 0 && c.jobsOf[j.project] >= j.limits.Jobs {
		return project(fmt.Sprintf("jobs %d running", j.limits.Jobs), "jobs")
	}
	if b := j.limits.ConnBound; b > 0 {
		for _, srv := range j.limits.Servers {
			if used := c.connsOn[srv]; used > 0 && used+j.limits.Connections > b {
				return project(fmt.Sprintf("connections on %s: %d held by running jobs + %d > %d", srv, used, j.limits.Connections, b), "connections")
			}
		}
	}
	s := c.sample
	if s.MemTotal == 0 {
		return verdict{}
	}
	free := s.RAMFreePct()
	ram := func(reserve float64) string {
		return fmt.Sprintf("free RAM %s%% < reserve %s%%", num(free, 0), num(reserve, 0))
	}
	if m.RAMReserve > 0 && free < m.RAMReserve {
		return machine(ram(m.RAMReserve), "ram_reserve")
	}
	if j.limits.RAMReserve > 0 && free < j.limits.RAMReserve {
		return project(ram(j.limits.RAMReserve), "ram_reserve")
	}
	// Near the reserve, one job per sample, so each one's memory shows
	// before the next starts (a fresh one that ended no longer counts).
	reserve := max(m.RAMReserve, j.limits.RAMReserve)
	if reserve > 0 && c.jobsSinceFresh > 0 && free < reserve+c.opts.Hysteresis {
		return machine(fmt.Sprintf("free RAM %s%% is near reserve %s%%: one job per sample", num(free, 0), num(reserve, 0)), "ram_reserve")
	}
	return verdict{}
}

// countJob counts j as running: its place, its project's and its
// connections on each of its servers. c.mu held.
func (c *Controller) countJob(j *job) {
	if c.jobsOf == nil {
		c.jobsOf = map[string]int{}
	}
	if c.connsOn == nil {
		c.connsOn = map[string]int{}
	}
	j.running = true
	c.jobsRunning++
	c.jobsOf[j.project]++
	for _, srv := range j.limits.Servers {
		c.connsOn[srv] += j.limits.Connections
	}
}

// dispatchJobs starts the jobs that fit, in order: the first one held by
// a machine bound holds back those behind it; one held by its project's
// is passed over. c.mu held.
func (c *Controller) dispatchJobs() []*job {
	var admitted []*job
	var block *verdict
	left := make([]*job, 0, len(c.jobq))
	for _, j := range c.jobq {
		v := c.judgeJob(j)
		if v.reason == "" && block == nil {
			c.countJob(j)
			if c.sample.MemTotal > 0 {
				c.jobsSinceFresh++
				j.fresh, j.gen = true, c.sampleGen
			}
			admitted = append(admitted, j)
			continue
		}
		if v.reason == "" {
			v = verdict{reason: block.reason, limit: "queue"}
		} else if v.machine && block == nil {
			block = &v
		}
		j.reason, j.limit = v.reason, v.limit
		left = append(left, j)
	}
	c.jobq = left
	for _, j := range left {
		select {
		case j.update <- struct{}{}:
		default:
		}
	}
	return admitted
}

// JobsSnapshot is the jobs queue, for status and the benchmark.
type JobsSnapshot struct {
	Limit   int // the machine's job bound
	Running int
	Queue   []Queued // Key is the project
}

// Jobs returns the jobs queue's state.
func (c *Controller) Jobs() JobsSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := JobsSnapshot{Limit: c.MachineJobs(), Running: c.jobsRunning}
	for i, j := range c.jobq {
		s.Queue = append(s.Queue, Queued{Key: j.project, Position: i + 1, Reason: j.reason, Limit: j.limit})
	}
	return s
}
