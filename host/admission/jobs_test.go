package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

// countingSource counts the samples taken.
type countingSource struct {
	fakeSource
	n atomic.Int32
}

func (c *countingSource) Sample(ctx context.Context) (Sample, error) {
	c.n.Add(1)
	return c.fakeSource.Sample(ctx)
}

// TestJobHandoffOnRelease: a release hands its place to the next waiter
// before it returns, with no sample taken and no tick (the controller's
// Run is not running): a freed place is never idle until a timer fires,
// also near the RAM reserve, where starts are otherwise one per sample.
func TestJobHandoffOnRelease(t *testing.T) {
	for _, free := range []float64{80, 22} { // far from the reserve; near it
		src := &countingSource{}
		src.setRAM(free)
		c := New(Options{Source: src, Limits: func() Limits { return Limits{RAMReserve: 20} }, Jobs: 1, Interval: time.Hour, Hysteresis: 5})
		ctx := context.Background()
		first, err := c.Job(ctx, "p", JobLimits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		next := make(chan func(), 1)
		go func() {
			r, err := c.Job(ctx, "p", JobLimits{}, nil)
			if err != nil {
				t.Error(err)
			}
			next <- r
		}()
		waitJobs(t, c, 1)
		samples := src.n.Load()
		first()
		if s := c.Jobs(); s.Running != 1 || len(s.Queue) != 0 {
			t.Errorf("free RAM %v%%: right after the release: %+v; want the next job running", free, s)
		}
		select {
		case r := <-next:
			r()
		case <-time.After(10 * time.Second): // only catches a hang
			t.Fatalf("free RAM %v%%: the next job never started after the release: %+v", free, c.Jobs())
		}
		if got := src.n.Load(); got != samples {
			t.Errorf("free RAM %v%%: the hand-off took %d samples; want none", free, got-samples)
		}
	}
}

// TestJobsNearReserveOneUnmeasured: near the RAM reserve at most one job
// no sample has measured runs: a second waits for the sample, and the
// place a fresh job frees when it ends goes to the next one at once.
func TestJobsNearReserveOneUnmeasured(t *testing.T) {
	c, src := newJobsTest(t, 4, Limits{RAMReserve: 20})
	src.setRAM(22) // below reserve + hysteresis (5)
	ctx := context.Background()
	c.Tick(ctx)
	first, err := c.Job(ctx, "p", JobLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := make(chan func(), 2)
	for range 2 {
		go func() {
			r, err := c.Job(ctx, "p", JobLimits{}, nil)
			if err != nil {
				t.Error(err)
			}
			next <- r
		}()
	}
	s := waitJobs(t, c, 2)
	if want := "free RAM 22% is near reserve 20%: one job per sample (machine)"; s.Queue[0].Reason != want {
		t.Errorf("held for %q; want %q", s.Queue[0].Reason, want)
	}
	first()
	if s := c.Jobs(); s.Running != 1 || len(s.Queue) != 1 {
		t.Fatalf("after the fresh job ended: %+v; want the next running and one still held", s)
	}
	c.Tick(ctx) // the sample measures the running one: the last may start
	if s := c.Jobs(); s.Running != 2 || len(s.Queue) != 0 {
		t.Fatalf("after a sample: %+v; want both running", s)
	}
	(<-next)()
	(<-next)()
}

// TestJobsAdopt: a command that already runs (taken over by a restarted
// daemon) is counted at once, past the machine's job bound too, for its
// place and its connections: a bounded job on its server waits for it,
// saying so, and starts once it is released (once, however often release
// is called).
func TestJobsAdopt(t *testing.T) {
	ctx := context.Background()
	const pg = "postgres://127.0.0.1:5432"
	lim := JobLimits{Servers: []string{pg}, Connections: 1, ConnBound: 1}

	c, _ := newJobsTest(t, 1, Limits{})
	a, b := c.Adopt("a", JobLimits{}), c.Adopt("a", JobLimits{})
	if s := c.Jobs(); s.Running != 2 {
		t.Errorf("two adoptions with jobs = 1: %+v; want both running", s)
	}
	a()
	b()

	c, _ = newJobsTest(t, 10, Limits{})
	first, second := c.Adopt("a", lim), c.Adopt("a", lim)
	started := make(chan func(), 1)
	go func() {
		r, err := c.Job(ctx, "a", lim, nil)
		if err != nil {
			t.Error(err)
			return
		}
		started <- r
	}()
	s := waitJobs(t, c, 1)
	if want := "connections on " + pg + ": 2 held by running jobs + 1 > 1 (project a)"; s.Queue[0].Reason != want {
		t.Errorf("queued for %q; want %q", s.Queue[0].Reason, want)
	}
	first()
	first()
	if s := c.Jobs(); s.Running != 1 || len(s.Queue) != 1 || s.Queue[0].Reason != "connections on "+pg+": 1 held by running jobs + 1 > 1 (project a)" {
		t.Fatalf("after one adopted job ended (released twice): %+v; want the other holding the waiter", s)
	}
	second()
	select {
	case r := <-started:
		r()
	case <-time.After(10 * time.Second):
		t.Fatalf("the queued job did not start once the adopted ones ended: %+v", c.Jobs())
	}
	if s := c.Jobs(); s.Running != 0 {
		t.Errorf("after all: %+v; want none running", s)
	}
}
