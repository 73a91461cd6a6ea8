package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeSource plays a sample set by the test.
type fakeSource struct {
	mu sync.Mutex
	s  Sample
}

func (f *fakeSource) Sample(context.Context) (Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, nil
}

func (f *fakeSource) setRAM(pct float64) {
	f.mu.Lock()
	f.s.MemTotal, f.s.MemAvailable = 1000, uint64(pct*10)
	f.mu.Unlock()
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recorder records Suspend and Resume calls.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) hook(what string) func(string) error {
	return func(k string) error {
		r.mu.Lock()
		r.calls = append(r.calls, what+" "+k)
		r.mu.Unlock()
		return nil
	}
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func newTest(t *testing.T, lim Limits) (*Controller, *fakeSource, *fakeClock, *recorder) {
	t.Helper()
	src := &fakeSource{s: Sample{MemTotal: 1000, MemAvailable: 500, DiskTotal: 100e9, DiskFree: 50e9}}
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	rec := &recorder{}
	c := New(Options{
		Source: src, Limits: func() Limits { return lim }, Now: clk.now,
		Suspend: rec.hook("suspend"), Resume: rec.hook("resume"),
		SuspendGap: 10 * time.Second, Hysteresis: 5,
	})
	return c, src, clk, rec
}

// waitQueued waits until key is at position pos in the queue.
func waitQueued(t *testing.T, c *Controller, key string, pos int) Queued {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if q, ok := c.Queued(key); ok && q.Position == pos {
			return q
		}
		time.Sleep(time.Millisecond)
	}
	q, ok := c.Queued(key)
	t.Fatalf("%s: queued %v at %d; want position %d", key, ok, q.Position, pos)
	return q
}

func TestFIFOUnderTwentyUps(t *testing.T) {
	lim := Limits{MaxParallel: 4}
	c, _, _, _ := newTest(t, lim)
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for i := range 20 {
		key := fmt.Sprintf("p/w%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Acquire(ctx, key, lim, false, nil); err != nil {
				t.Errorf("acquire %s: %v", key, err)
				return
			}
			mu.Lock()
			order = append(order, key)
			mu.Unlock()
		}()
		// Arrival order is the test's: wait until this one is admitted
		// or queued before the next arrives.
		if i >= 4 {
			waitQueued(t, c, key, i-3)
		} else {
			for c.find2(key) == false {
				time.Sleep(time.Millisecond)
			}
		}
	}
	q := waitQueued(t, c, "p/w19", 16)
	if q.Reason != "max_parallel 4 reached (machine)" {
		t.Errorf("reason %q; want %q", q.Reason, "max_parallel 4 reached (machine)")
	}
	// Each release admits exactly the next one in arrival order.
	for i := range 16 {
		c.Release(fmt.Sprintf("p/w%02d", i))
		want := fmt.Sprintf("p/w%02d", i+4)
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(order)
			mu.Unlock()
			if n >= i+5 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		mu.Lock()
		if len(order) != i+5 || order[len(order)-1] != want {
			t.Fatalf("after release %d admitted %v; want last %s and %d in all", i, order, want, i+5)
		}
		mu.Unlock()
	}
	wg.Wait()
}

// find2 reports whether key holds a slot (test helper).
func (c *Controller) find2(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.find(key) != nil
}

func TestReasons(t *testing.T) {
	full := Sample{MemTotal: 1000, MemAvailable: 500, DiskTotal: 100e9, DiskFree: 50e9}
	for _, tc := range []struct {
		name    string
		lim     Limits
		s       Sample
		running int
		want    string
	}{
		{"room", Limits{MaxParallel: 4, RAMReserve: 15, DiskHeadroom: 5}, full, 3, ""},
		{"max_parallel", Limits{MaxParallel: 4}, full, 4, "max_parallel 4 reached"},
		{"ram", Limits{RAMReserve: 15}, Sample{MemTotal: 1000, MemAvailable: 99}, 0, "free RAM 9% < reserve 15%"},
		{"disk", Limits{DiskHeadroom: 5}, Sample{DiskTotal: 1e12, DiskFree: 3.1e9}, 0, "free disk 3.1 GB < headroom 5 GB"},
		{"unknown ram is not a bound", Limits{RAMReserve: 15}, Sample{}, 0, ""},
		{"no bounds", Limits{}, Sample{MemTotal: 1000, MemAvailable: 1}, 100, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reason(tc.lim, tc.s, tc.running); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestLowerOnlyTightens(t *testing.T) {
	m := Limits{MaxParallel: 8, RAMReserve: 10, DiskHeadroom: 5}
	got := m.Lower(Limits{MaxParallel: 2, RAMReserve: 5, DiskHeadroom: 20})
	want := Limits{MaxParallel: 2, RAMReserve: 10, DiskHeadroom: 20}
	if got != want {
		t.Errorf("got %+v; want %+v", got, want)
	}
	if got := (Limits{}).Lower(Limits{MaxParallel: 3}); got.MaxParallel != 3 {
		t.Errorf("unbounded lowered to %d; want 3", got.MaxParallel)
	}
	if got := m.Lower(Limits{MaxParallel: 20}); got.MaxParallel != 8 {
		t.Errorf("a project raised max_parallel to %d; want 8", got.MaxParallel)
	}
}

func TestNoWaitRefusesWithReason(t *testing.T) {
	lim := Limits{DiskHeadroom: 5}
	c, src, _, _ := newTest(t, lim)
	src.s.DiskFree = 3.1e9
	_, err := c.Acquire(context.Background(), "p/a", lim, true, nil)
	var r *Refused
	if !errors.As(err, &r) || r.Reason != "free disk 3.1 GB < headroom 5 GB (machine)" {
		t.Fatalf("got %v; want a refusal naming free disk", err)
	}
	if len(c.Snapshot().Queue) != 0 {
		t.Errorf("a refused --no-wait stayed in the queue")
	}
}

func TestCancelledUpLeavesQueue(t *testing.T) {
	lim := Limits{MaxParallel: 1}
	c, _, _, _ := newTest(t, lim)
	if _, err := c.Acquire(context.Background(), "p/a", lim, false, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var waits []Wait
	var mu sync.Mutex
	go func() {
		_, err := c.Acquire(ctx, "p/b", lim, false, func(w Wait) { mu.Lock(); waits = append(waits, w); mu.Unlock() })
		errc <- err
	}()
	waitQueued(t, c, "p/b", 1)
	go c.Acquire(context.Background(), "p/c", lim, false, nil)
	waitQueued(t, c, "p/c", 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire: %v; want context.Canceled", err)
	}
	waitQueued(t, c, "p/c", 1) // moved up
	mu.Lock()
	if len(waits) == 0 || waits[0] != (Wait{Position: 1, Reason: "max_parallel 1 reached (machine)", Limit: "machine.max_parallel"}) {
		t.Errorf("waits %+v; want first {1 max_parallel 1 reached}", waits)
	}
	mu.Unlock()
	c.Release("p/a")
	deadline := time.Now().Add(5 * time.Second)
	for !c.find2("p/c") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if c.find2("p/b") || !c.find2("p/c") {
		t.Errorf("after release: b holds %v, c holds %v; want only c", c.find2("p/b"), c.find2("p/c"))
	}
}

func TestSuspendNewestResumeInOrderWithoutFlapping(t *testing.T) {
	lim := Limits{RAMReserve: 20}
	c, src, clk, rec := newTest(t, lim)
	ctx := context.Background()
	for _, k := range []string{"p/a", "p/b", "p/c"} {
		if _, err := c.Acquire(ctx, k, lim, false, nil); err != nil {
			t.Fatal(err)
		}
		c.Done(k)
		clk.add(time.Second)
	}
	step := func(pct float64, adv time.Duration) {
		src.setRAM(pct)
		clk.add(adv)
		c.Tick(ctx)
	}
	step(15, 0)              // below reserve: suspend the newest, c
	step(15, 5*time.Second)  // within the gap: nothing
	step(15, 10*time.Second) // still below: b
	step(15, 10*time.Second) // a is the last running: never suspended
	step(22, 10*time.Second) // above reserve, below reserve+hysteresis: nothing
	step(19, 10*time.Second) // below again: nothing left to suspend
	step(25, 10*time.Second) // reserve+hysteresis: resume c (suspended first)
	step(25, time.Second)    // within the gap: nothing
	step(24, 10*time.Second) // below reserve+hysteresis: b stays suspended
	step(26, 10*time.Second) // resume b
	want := []string{"suspend p/c", "suspend p/b", "resume p/c", "resume p/b"}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Errorf("calls %v; want %v", got, want)
	}
}

func TestSuspendedWorldsResumeBeforeQueueIsAdmitted(t *testing.T) {
	lim := Limits{RAMReserve: 20}
	c, src, clk, _ := newTest(t, lim)
	ctx := context.Background()
	for _, k := range []string{"p/a", "p/b"} {
		c.Acquire(ctx, k, lim, false, nil)
		c.Done(k)
	}
	src.setRAM(10)
	c.Tick(ctx) // suspends b
	src.setRAM(22)
	clk.add(20 * time.Second)
	c.Tick(ctx)
	_, err := c.Acquire(ctx, "p/n", lim, true, nil)
	var r *Refused
	if !errors.As(err, &r) || r.Reason != "1 world(s) suspended for RAM resume first (machine)" {
		t.Fatalf("got %v; want refusal while b is suspended", err)
	}
	// up on the suspended world itself resumes it: free RAM is above the reserve.
	resumed, err := c.Acquire(ctx, "p/b", lim, true, nil)
	if err != nil || !resumed {
		t.Fatalf("up on suspended world: resumed %v, %v; want resumed", resumed, err)
	}
}

func TestIdleSuspension(t *testing.T) {
	lim := Limits{}
	c, _, clk, rec := newTest(t, lim)
	ctx := context.Background()
	cpu := time.Duration(0)
	c.opts.CPUTime = func(string) (time.Duration, bool) { return cpu, true }
	c.Acquire(ctx, "p/a", lim, false, nil)
	c.Done("p/a")
	c.SetIdle("p/a", 30*time.Minute)
	clk.add(20 * time.Minute)
	c.Touch("p/a") // a request
	clk.add(20 * time.Minute)
	c.Tick(ctx)
	cpu = time.Second // it worked without requests
	clk.add(20 * time.Minute)
	c.Tick(ctx)
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("suspended while active: %v", got)
	}
	clk.add(31 * time.Minute)
	c.Tick(ctx)
	if got := rec.got(); !slices.Equal(got, []string{"suspend p/a"}) {
		t.Fatalf("calls %v; want [suspend p/a]", got)
	}
	if why, ok := c.Suspended("p/a"); !ok || why != WhyIdle {
		t.Errorf("suspended %v (%s); want idle", ok, why)
	}
	// Idle worlds are not resumed by the pressure loop, only by a caller.
	clk.add(time.Hour)
	c.Tick(ctx)
	if resumed, err := c.Acquire(ctx, "p/a", lim, false, nil); err != nil || !resumed {
		t.Fatalf("wake: resumed %v, %v", resumed, err)
	}
	if got := rec.got(); !slices.Equal(got, []string{"suspend p/a", "resume p/a"}) {
		t.Errorf("calls %v", got)
	}
}

// TestIdleSuspensionWaitsForOpenConnections: a world with a proxied
// connection open (a WebSocket, an event stream) is not idle however long
// it stays open; its idle time counts from when the last one closed.
func TestIdleSuspensionWaitsForOpenConnections(t *testing.T) {
	lim := Limits{}
	c, _, clk, rec := newTest(t, lim)
	ctx := context.Background()
	open, ended := 1, time.Time{}
	c.opts.Activity = func(key string) (int, time.Time) {
		if key != "p/a" {
			t.Errorf("Activity asked of %q; want p/a", key)
		}
		return open, ended
	}
	c.Acquire(ctx, "p/a", lim, false, nil)
	c.Done("p/a")
	c.SetIdle("p/a", 30*time.Minute)
	for range 3 {
		clk.add(time.Hour)
		c.Tick(ctx)
	}
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("suspended with a connection open: %v", got)
	}
	// It closes 10 minutes after the last tick, seen 25 minutes later.
	clk.add(10 * time.Minute)
	open, ended = 0, clk.now()
	clk.add(25 * time.Minute)
	c.Tick(ctx)
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("suspended 25 minutes after the close (idle_suspend 30m): %v", got)
	}
	clk.add(5 * time.Minute)
	c.Tick(ctx)
	if got := rec.got(); !slices.Equal(got, []string{"suspend p/a"}) {
		t.Fatalf("calls %v; want [suspend p/a] idle_suspend after the close", got)
	}
}

func TestSecondUpOfAQueuedWorldSurvivesTheFirstLeaving(t *testing.T) {
	lim := Limits{MaxParallel: 1}
	c, _, _, _ := newTest(t, lim)
	c.Acquire(context.Background(), "p/a", lim, false, nil)
	ctx1, cancel1 := context.WithCancel(context.Background())
	err1 := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx1, "p/b", lim, false, nil); err1 <- err }()
	waitQueued(t, c, "p/b", 1)
	err2 := make(chan error, 1)
	go func() { _, err := c.Acquire(context.Background(), "p/b", lim, false, nil); err2 <- err }()
	// Wait until the second joined the ticket.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		n := 0
		if i := c.findTicket("p/b"); i >= 0 {
			n = c.queue[i].waiters
		}
		c.mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel1()
	if err := <-err1; !errors.Is(err, context.Canceled) {
		t.Fatalf("first up: %v; want cancelled", err)
	}
	waitQueued(t, c, "p/b", 1) // still queued for the second
	c.Release("p/a")
	if err := <-err2; err != nil {
		t.Fatalf("second up: %v; want admitted", err)
	}
	if !c.find2("p/b") {
		t.Errorf("p/b holds no slot after admission")
	}
}
