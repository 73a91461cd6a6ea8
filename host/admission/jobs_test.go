package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func newJobsTest(t *testing.T, jobs int, lim Limits) (*Controller, *fakeSource) {
	t.Helper()
	c, src, _, _ := newTest(t, lim)
	c.opts.Jobs = jobs
	return c, src
}

// waitJob waits until the jobs queue holds n waiters.
func waitJobs(t *testing.T, c *Controller, n int) JobsSnapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s := c.Jobs(); len(s.Queue) == n {
			return s
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("jobs queue never held %d: %+v", n, c.Jobs())
	return JobsSnapshot{}
}

// Jobs beyond the bound wait in FIFO order, with their position and the
// bound that holds them; each release starts the next in order.
func TestJobsFIFO(t *testing.T) {
	c, _ := newJobsTest(t, 2, Limits{})
	ctx := context.Background()
	var rels []func()
	for range 2 {
		r, err := c.Job(ctx, "p", JobLimits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, r)
	}
	type start struct {
		i int
		r func()
	}
	var mu sync.Mutex
	started := make(chan start, 5)
	var firstWait Wait
	for i := range 5 {
		go func() {
			r, err := c.Job(ctx, "p", JobLimits{}, func(w Wait) {
				mu.Lock()
				if i == 0 && firstWait == (Wait{}) {
					firstWait = w
				}
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
				return
			}
			started <- start{i, r}
		}()
		waitJobs(t, c, i+1)
	}
	s := c.Jobs()
	if s.Running != 2 || s.Queue[4].Position != 5 || s.Queue[0].Reason != "jobs 2 running (machine)" || s.Queue[0].Limit != "machine.jobs" {
		t.Errorf("snapshot %+v", s)
	}
	// One release at a time: each starts exactly the next in order.
	for want := range 5 {
		rels[0]()
		rels = rels[1:]
		st := <-started
		if st.i != want {
			t.Fatalf("started %d; want %d (FIFO)", st.i, want)
		}
		rels = append(rels, st.r)
	}
	for _, r := range rels {
		r()
	}
	mu.Lock()
	defer mu.Unlock()
	if firstWait.Position != 1 || firstWait.Reason != "jobs 2 running (machine)" {
		t.Errorf("first waiter told %+v", firstWait)
	}
}

// Below the RAM reserve no job starts; a sample above it starts them.
func TestJobsWaitForRAM(t *testing.T) {
	c, src := newJobsTest(t, 4, Limits{RAMReserve: 20})
	src.setRAM(15)
	ctx := context.Background()
	c.Tick(ctx)
	done := make(chan func(), 1)
	go func() {
		r, err := c.Job(ctx, "p", JobLimits{}, nil)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	s := waitJobs(t, c, 1)
	if s.Queue[0].Reason != "free RAM 15% < reserve 20% (machine)" {
		t.Errorf("reason %q", s.Queue[0].Reason)
	}
	src.setRAM(50)
	c.Tick(ctx)
	(<-done)()
}

// A project's jobs bound counts its own jobs, and a job held by it does
// not hold back another project's.
func TestJobsProjectBound(t *testing.T) {
	c, _ := newJobsTest(t, 8, Limits{})
	ctx := context.Background()
	r1, _ := c.Job(ctx, "a", JobLimits{Jobs: 1}, nil)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := c.Job(cctx, "a", JobLimits{Jobs: 1}, nil); errc <- err }()
	s := waitJobs(t, c, 1)
	if s.Queue[0].Reason != "jobs 1 running (project a)" {
		t.Errorf("reason %q", s.Queue[0].Reason)
	}
	r2, err := c.Job(ctx, "b", JobLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A waiter whose caller has gone leaves at once.
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled job: %v", err)
	}
	if s := c.Jobs(); len(s.Queue) != 0 || s.Running != 2 {
		t.Errorf("after cancel: %+v", s)
	}
	r1()
	r2()
	r1() // twice is harmless
	if s := c.Jobs(); s.Running != 0 {
		t.Errorf("running %d after every release", s.Running)
	}
}

// BenchmarkJob is admission's own cost per job: 20 concurrent commands
// through Job and release, 2 at a time.
func BenchmarkJob(b *testing.B) {
	c := New(Options{Source: &fakeSource{s: Sample{MemTotal: 1000, MemAvailable: 900}}, Limits: func() Limits { return Limits{RAMReserve: 1} }, Jobs: 2})
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.Job(ctx, fmt.Sprint("p", i%3), JobLimits{}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				r()
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*20), "ns/job")
}

// TestJobsConnections: a job of a project that bounds connections waits
// while the jobs running on one of its servers, of any project, are
// counted for more than the bound with it; jobs on other servers and
// jobs of other projects pass; a release lets it in; a job alone always
// starts.
func TestJobsConnections(t *testing.T) {
	c, _ := newJobsTest(t, 10, Limits{})
	ctx := context.Background()
	const pg, my = "postgres://127.0.0.1:5432", "mysql://127.0.0.1:3306"
	bounded := JobLimits{Servers: []string{pg}, Connections: 30, ConnBound: 50}
	// Alone, a job bigger than the bound starts.
	big, err := c.Job(ctx, "a", JobLimits{Servers: []string{pg}, Connections: 80, ConnBound: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	big()
	// Another project's job, with no bound of its own, is counted.
	other, err := c.Job(ctx, "b", JobLimits{Servers: []string{pg}, Connections: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan func(), 1)
	go func() {
		r, err := c.Job(ctx, "a", bounded, nil)
		if err != nil {
			t.Error(err)
			return
		}
		started <- r
	}()
	s := waitJobs(t, c, 1)
	if want := "connections on " + pg + ": 30 held by running jobs + 30 > 50 (project a)"; s.Queue[0].Reason != want || s.Queue[0].Limit != "project.connections" {
		t.Errorf("queued %+v; want reason %q, limit project.connections", s.Queue[0], want)
	}
	// Jobs on another server, and of another project, are not held.
	for _, lim := range []JobLimits{{Servers: []string{my}, Connections: 30, ConnBound: 50}, {Servers: []string{pg}, Connections: 10}} {
		r, err := c.Job(ctx, "c", lim, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r()
	}
	if s := c.Jobs(); len(s.Queue) != 1 {
		t.Errorf("queue %+v; want the bounded job alone", s.Queue)
	}
	other()
	select {
	case r := <-started:
		r()
	case <-time.After(10 * time.Second):
		t.Fatalf("the bounded job did not start once room was made: %+v", c.Jobs())
	}
}
