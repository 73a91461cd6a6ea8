package admission

import (
	"context"
	"testing"
	"time"
)

// A project's max_parallel counts that project's worlds only; the
// machine's counts all of them (issue 29).
func TestProjectMaxParallelCountsItsOwnWorlds(t *testing.T) {
	c, _, _, _ := newTest(t, Limits{}) // no machine bound
	ctx := context.Background()
	if _, err := c.Acquire(ctx, "other/a", Limits{}, false, nil); err != nil {
		t.Fatal(err)
	}
	// max_parallel = 1 for "one": its first world starts although another
	// project runs one.
	if _, err := c.Acquire(ctx, "one/a", Limits{MaxParallel: 1}, true, nil); err != nil {
		t.Fatalf("first world of a project with max_parallel 1: %v", err)
	}
	_, err := c.Acquire(ctx, "one/b", Limits{MaxParallel: 1}, true, nil)
	if r, ok := err.(*Refused); !ok || r.Reason != "max_parallel 1 reached (project one)" {
		t.Fatalf("second world: %v; want refused by the project's bound", err)
	}
}

// A waiter held by its own project's bound does not hold back the worlds
// of other projects behind it; one held by the machine's does.
func TestProjectHeldWaiterDoesNotBlockOthers(t *testing.T) {
	lim := Limits{MaxParallel: 2}
	c, _, _, _ := newTest(t, lim)
	ctx := context.Background()
	one := Limits{MaxParallel: 1}
	c.Acquire(ctx, "one/a", one, false, nil)
	waiting := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx, "one/b", one, false, nil); waiting <- err }()
	q := waitQueued(t, c, "one/b", 1)
	if q.Reason != "max_parallel 1 reached (project one)" {
		t.Errorf("one/b: %q", q.Reason)
	}
	if _, err := c.Acquire(ctx, "two/a", Limits{}, true, nil); err != nil {
		t.Fatalf("two/a behind a project-held waiter: %v; want admitted", err)
	}
	// Now the machine is full (2): a new waiter of two waits by the
	// machine's bound, and one/b still by its project's.
	go c.Acquire(ctx, "two/b", Limits{}, false, nil)
	q = waitQueued(t, c, "two/b", 2)
	if q.Reason != "max_parallel 2 reached (machine)" {
		t.Errorf("two/b: %q", q.Reason)
	}
	c.Release("one/a")
	select {
	case err := <-waiting:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("one/b not admitted after one/a released")
	}
}

// The machine's bounds are read at every decision: a waiter queued under
// one reserve is admitted once `binky reserve` lowers it (Recheck).
func TestWaitersFollowTheCurrentReserve(t *testing.T) {
	lim := Limits{RAMReserve: 20}
	cur := lim
	c, src, _, _ := newTest(t, lim)
	c.opts.Limits = func() Limits { return cur }
	src.setRAM(15)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx, "p/a", Limits{}, false, nil); done <- err }()
	q := waitQueued(t, c, "p/a", 1)
	if q.Reason != "free RAM 15% < reserve 20% (machine)" {
		t.Errorf("reason %q", q.Reason)
	}
	c.mu.Lock()
	cur = Limits{RAMReserve: 5}
	c.mu.Unlock()
	c.Recheck()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter not admitted after the reserve was lowered")
	}
}

// Suspension passes over a world with no live process (stopping nothing
// frees nothing) and picks the newest one that has one.
func TestSuspendOnlyLiveWorlds(t *testing.T) {
	lim := Limits{RAMReserve: 20}
	c, src, clk, rec := newTest(t, lim)
	c.opts.Live = func(key string) bool { return key != "p/c" }
	ctx := context.Background()
	for _, k := range []string{"p/a", "p/b", "p/c"} {
		if _, err := c.Acquire(ctx, k, lim, false, nil); err != nil {
			t.Fatal(err)
		}
		c.Done(k)
		clk.add(time.Second)
	}
	src.setRAM(15)
	c.Tick(ctx)
	if got := rec.got(); len(got) != 1 || got[0] != "suspend p/b" {
		t.Errorf("calls %v; want p/b suspended (p/c has no live process)", got)
	}
}
