package ports

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// growable is a.Growable, failing the test on an error.
func growable(t *testing.T, a *Allocator, project, worktree string, size int) bool {
	t.Helper()
	ok, err := a.Growable(context.Background(), project, worktree, size, [2]int{})
	if err != nil {
		t.Fatalf("Growable(%s/%s, %d): %v", project, worktree, size, err)
	}
	return ok
}

// TestReserveGrowsInPlace: a world that needs more ports keeps its first
// port when the ports after its block are free — even while its services
// hold its own ports, and even when a block would fit earlier in the
// range — so its running services keep theirs.
func TestReserveGrowsInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fb := &fakeBind{}
	a, reg := newAllocator(t, Options{Range: [2]int{700, 799}, Bind: fb.bind})
	for _, wt := range []string{"before", "w"} {
		if _, _, err := a.Reserve(ctx, "p", wt, 2, [2]int{}); err != nil {
			t.Fatal(err)
		}
	}
	// w has 702-703, its services listen there, and 700-701 are free again.
	if _, _, err := a.Release(ctx, "p", "before"); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	fb.held = map[string]error{"127.0.0.1:702": syscall.EADDRINUSE, "127.0.0.1:703": syscall.EADDRINUSE}
	fb.mu.Unlock()
	if !growable(t, a, "p", "w", 4) {
		t.Errorf("Growable(w, 4) = false; want true (704-705 are free)")
	}
	b, created, err := a.ReserveBlock(ctx, "p", "w", 4, [2]int{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Lo != 702 || b.Hi != 705 || !created {
		t.Errorf("w with 4 ports = %d-%d new=%v; want 702-705 grown in place, new=true", b.Lo, b.Hi, created)
	}
	if got, err := reg.PortBlock(ctx, "p", "w"); err != nil || got.Lo != 702 || got.Hi != 705 {
		t.Errorf("registry has w at %+v, %v; want 702-705", got, err)
	}
	// Growing again, past what the range allows at its start: still in place.
	if lo, hi, err := a.Reserve(ctx, "p", "w", 7, [2]int{}); err != nil || lo != 702 || hi != 708 {
		t.Errorf("w with 7 ports = %d-%d, %v; want 702-708", lo, hi, err)
	}
	if !growable(t, a, "p", "w", 3) || !growable(t, a, "p", "w", 0) {
		t.Errorf("Growable of fewer ports = false; want true (the block is kept)")
	}
	if growable(t, a, "p", "none", 3) {
		t.Errorf("Growable of a worktree without a block = true; want false")
	}
}

// TestLeasedReserveGrowsInPlace: with the lease store, a world grows in
// place too, its lease follows (the whole new block leased, the old
// lease gone), and a block leased by another home right after it makes
// it move instead.
func TestLeasedReserveGrowsInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{25000, 25099}
	h, other := newHome(t, "", l, rng), newHome(t, "", l, rng)
	reserve(t, h, "p", "before", 2) // 25000-25001
	reserve(t, h, "p", "w", 2)      // 25002-25003
	if _, _, err := h.a.Release(ctx, "p", "before"); err != nil {
		t.Fatal(err)
	}
	if !growable(t, h.a, "p", "w", 4) {
		t.Errorf("Growable(w, 4) = false; want true")
	}
	if lo, hi := reserve(t, h, "p", "w", 4); lo != 25002 || hi != 25005 {
		t.Fatalf("w with 4 ports = %d-%d; want 25002-25005 grown in place", lo, hi)
	}
	files := checkLeasesDisjoint(t, l)
	if le := files["block-25002-25005.json"]; le == nil || le.HomeID != h.id || le.Worktree != "w" {
		t.Errorf("lease 25002-25005 = %+v; want w's of home %s", le, h.id)
	}
	if len(files) != 1 {
		t.Errorf("leases %v; want only 25002-25005", files)
	}
	// Another home leases the next ports: w cannot grow, and moves.
	if lo, hi := reserve(t, other, "q", "x", 2); lo != 25000 || hi != 25001 {
		t.Fatalf("other home got %d-%d; want 25000-25001", lo, hi)
	}
	if lo, hi := reserve(t, other, "q", "y", 2); lo != 25006 || hi != 25007 {
		t.Fatalf("other home got %d-%d; want 25006-25007", lo, hi)
	}
	if growable(t, h.a, "p", "w", 5) {
		t.Errorf("Growable(w, 5) = true; want false (25006 is leased by another home)")
	}
	if lo, hi := reserve(t, h, "p", "w", 5); lo != 25008 || hi != 25012 {
		t.Errorf("w with 5 ports = %d-%d; want moved to 25008-25012", lo, hi)
	}
	files = checkLeasesDisjoint(t, l)
	if _, ok := files["block-25002-25005.json"]; ok || len(files) != 3 {
		t.Errorf("leases %v; want x's, y's and w's new one", files)
	}
}

// TestGrowBlockedMoves: a block grows in place only when every added
// port is free; a taken neighbour — another worktree's block, a program
// listening, the end of the range — makes it move, and Growable says so
// beforehand.
func TestGrowBlockedMoves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, a *Allocator, fb *fakeBind) // w has 800-802
		rng    [2]int
		lo, hi int
	}{
		{"free neighbours", func(*testing.T, *Allocator, *fakeBind) {}, [2]int{800, 899}, 800, 804},
		{"next port in another worktree's block", func(t *testing.T, a *Allocator, _ *fakeBind) {
			if _, _, err := a.Reserve(context.Background(), "q", "x", 1, [2]int{}); err != nil { // 803
				t.Fatal(err)
			}
		}, [2]int{800, 899}, 804, 808},
		{"last added port held by a program", func(_ *testing.T, _ *Allocator, fb *fakeBind) {
			fb.mu.Lock()
			fb.held = map[string]error{"0.0.0.0:804": syscall.EADDRINUSE}
			fb.mu.Unlock()
		}, [2]int{800, 899}, 805, 809},
		{"range ends", func(*testing.T, *Allocator, *fakeBind) {}, [2]int{798, 803}, 798, 802},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fb := &fakeBind{}
			a, _ := newAllocator(t, Options{Range: [2]int{800, 899}, Bind: fb.bind})
			if lo, _, err := a.Reserve(ctx, "p", "w", 3, [2]int{}); err != nil || lo != 800 {
				t.Fatalf("w = %d, %v; want 800", lo, err)
			}
			tc.setup(t, a, fb)
			want := tc.lo == 800
			if got, err := a.Growable(ctx, "p", "w", 5, tc.rng); err != nil || got != want {
				t.Errorf("Growable(w, 5) = %v, %v; want %v", got, err, want)
			}
			if lo, hi, err := a.Reserve(ctx, "p", "w", 5, tc.rng); err != nil || lo != tc.lo || hi != tc.hi {
				t.Errorf("w with 5 ports = %d-%d, %v; want %d-%d", lo, hi, err, tc.lo, tc.hi)
			}
		})
	}
}

// TestGrowableArguments: Growable refuses what Reserve refuses.
func TestGrowableArguments(t *testing.T) {
	t.Parallel()
	a, _ := newAllocator(t, Options{Range: [2]int{900, 999}, Bind: (&fakeBind{}).bind})
	for _, bad := range []struct {
		size int
		rng  [2]int
	}{{-1, [2]int{}}, {MaxBlock + 1, [2]int{}}, {2, [2]int{10, 5}}} {
		if _, err := a.Growable(context.Background(), "p", "w", bad.size, bad.rng); err == nil {
			t.Errorf("Growable(size %d, range %v): got nil error; want one", bad.size, bad.rng)
		}
	}
}

// growHomes makes two homes leasing in one store, each in a lock domain
// of its own (as two users' are), and lays out n worlds of 3 ports each,
// so that each of a's worlds (p/w<i>) has three free ports after it and
// then one of b's (p/w<i>), which has another of a's right after it
// (the last one a's p/end):
//
//	a/w0 _ _ _ b/w0 a/w1 _ _ _ b/w1 … a/end
//
// Growing to 6 ports, each a/w<i> can grow into the gap after it, and
// each b/w<i> can only move — into that same gap (with its own old
// ports) while a/w<i> has not grown yet.
func growHomes(t *testing.T, rng [2]int, n int) (a, b *testHome) {
	t.Helper()
	dir := t.TempDir()
	la, lb := openTestLeases(t, dir), openTestLeases(t, dir)
	la.subdir, lb.subdir = ownDirName(me(t), 1), ownDirName(me(t), 2)
	a, b = newHome(t, "", la, rng), newHome(t, "", lb, rng)
	for i := range n {
		wt := "w" + strconv.Itoa(i)
		reserve(t, a, "p", wt, 3)
		reserve(t, a, "gap", wt, 3)
		reserve(t, b, "p", wt, 3)
	}
	reserve(t, a, "p", "end", 3)
	for i := range n {
		if _, _, err := a.a.Release(context.Background(), "gap", "w"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// TestGrowRaceWithMove: a world growing in place and another home's
// world moving into the same ports at the same moment never both keep
// them. Either order of lease writes is forced: the one that leased
// first keeps the ports, the other goes past.
func TestGrowRaceWithMove(t *testing.T) {
	t.Parallel()
	rng := [2]int{25100, 25199}
	t.Run("grow leases first", func(t *testing.T) {
		t.Parallel()
		a, b := growHomes(t, rng, 1) // a/w0 25100-25102, b/w0 25106-25108, a/end 25109-25111
		once := sync.Once{}
		a.a.afterWrite = func(int, int) {
			once.Do(func() { // b moves while a's grown lease is written
				if lo, hi := reserve(t, b, "p", "w0", 6); lo != 25112 || hi != 25117 {
					t.Errorf("b/w0 = %d-%d; want 25112-25117, past a's grown lease", lo, hi)
				}
			})
		}
		if lo, hi := reserve(t, a, "p", "w0", 6); lo != 25100 || hi != 25105 {
			t.Errorf("a/w0 = %d-%d; want 25100-25105 grown in place", lo, hi)
		}
		checkLeasesDisjoint(t, a.a.leases)
	})
	t.Run("move leases first", func(t *testing.T) {
		t.Parallel()
		a, b := growHomes(t, rng, 1)
		once := sync.Once{}
		b.a.afterWrite = func(int, int) {
			once.Do(func() { // a tries to grow while b's moved lease is written
				if growable(t, a.a, "p", "w0", 6) {
					t.Errorf("Growable(a/w0, 6) = true while b leases 25103-25108; want false")
				}
				if lo, hi := reserve(t, a, "p", "w0", 6); lo != 25112 || hi != 25117 {
					t.Errorf("a/w0 = %d-%d; want moved to 25112-25117", lo, hi)
				}
			})
		}
		if lo, hi := reserve(t, b, "p", "w0", 6); lo != 25103 || hi != 25108 {
			t.Errorf("b/w0 = %d-%d; want 25103-25108, the gap and its own ports", lo, hi)
		}
		checkLeasesDisjoint(t, a.a.leases)
	})
}

// TestGrowConcurrent: two homes' worlds grow at once, each of a's into
// the gap after it and each of b's (which cannot grow) moving toward it;
// no two blocks or leases ever overlap, and every block is leased.
func TestGrowConcurrent(t *testing.T) {
	t.Parallel()
	rng := [2]int{25200, 25399}
	const n, size = 4, 6
	for round := range 5 {
		a, b := growHomes(t, rng, n)
		var ga, gb map[string][2]int
		var wg sync.WaitGroup
		wg.Go(func() { ga = reserveAtOnce(t, a, "a", n, size) })
		wg.Go(func() { gb = reserveAtOnce(t, b, "b", n, size) })
		wg.Wait()
		got := map[string][2]int{}
		for k, v := range ga {
			got[k] = v
		}
		for k, v := range gb {
			got[k] = v
		}
		if len(got) != 2*n {
			t.Fatalf("round %d: got %d blocks %v; want %d", round, len(got), got, 2*n)
		}
		checkDisjoint(t, got, size, rng)
		files := checkLeasesDisjoint(t, a.a.leases)
		if len(files) != 2*n+1 {
			t.Errorf("round %d: %d lease files; want %d", round, len(files), 2*n+1)
		}
		for who, h := range map[string]*testHome{"a": a, "b": b} {
			for i := range n {
				blk := got[fmt.Sprintf("%s/w%d", who, i)]
				if le := files[leaseName(blk[0], blk[1])]; le == nil || le.HomeID != h.id || le.Worktree != "w"+strconv.Itoa(i) {
					t.Errorf("round %d: %s/w%d's block %v has lease %+v; want its own", round, who, i, blk, le)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}
