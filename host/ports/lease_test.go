package ports

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

// freeBind finds every port free: these tests are about leases, so only
// the lease store (and each home's registry) keeps blocks apart.
func freeBind(string, string) (io.Closer, error) { return io.NopCloser(nil), nil }

// testHome is one BINKY_HOME: a directory with its home.id and registry,
// and an allocator that leases in a shared store.
type testHome struct {
	dir, id string
	reg     *registry.Registry
	a       *Allocator
	close   func() // closes reg, once
}

func newID(t testing.TB) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func openTestLeases(t testing.TB, dir string) *Leases {
	t.Helper()
	l, err := OpenLeases(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newHome makes a home in dir (a new temporary directory when "") leasing
// in l, with the allocator's default range rng.
func newHome(t testing.TB, dir string, l *Leases, rng [2]int) *testHome {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	h := &testHome{dir: dir, id: newID(t)}
	if err := os.WriteFile(filepath.Join(dir, HomeIDFile), []byte(h.id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(context.Background(), filepath.Join(dir, registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	h.reg, h.close = reg, sync.OnceFunc(func() { reg.Close() })
	t.Cleanup(h.close)
	h.a, err = New(reg, Options{Range: rng, Bind: freeBind, Leases: l, HomeID: h.id, HomeDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// leaseFiles lists the lease directory's block files, by name.
func leaseFiles(t *testing.T, l *Leases) map[string]*Lease {
	t.Helper()
	ents, err := os.ReadDir(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Lease{}
	for _, e := range ents {
		if lo, hi, ok := parseLeaseName(e.Name()); ok {
			out[e.Name()] = readLease(filepath.Join(l.Dir(), e.Name()), lo, hi)
		}
	}
	return out
}

func reserve(t *testing.T, h *testHome, project, worktree string, size int) (int, int) {
	t.Helper()
	lo, hi, err := h.a.Reserve(context.Background(), project, worktree, size, [2]int{})
	if err != nil {
		t.Fatalf("reserve %s/%s in home %s: %v", project, worktree, h.dir, err)
	}
	return lo, hi
}

// TestLeasesKeepHomesApart: two homes with the same project and worktree
// names share one lease store: the second gets the ports after the first's,
// each lease says whose it is, and Release frees only its own.
func TestLeasesKeepHomesApart(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{100, 199}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	if lo, hi := reserve(t, a, "p", "main", 3); lo != 100 || hi != 102 {
		t.Fatalf("home a got %d-%d; want 100-102", lo, hi)
	}
	if lo, hi := reserve(t, b, "p", "main", 3); lo != 103 || hi != 105 {
		t.Fatalf("home b got %d-%d; want 103-105, after home a's lease", lo, hi)
	}
	files := leaseFiles(t, l)
	want := map[string]*testHome{"block-100-102.json": a, "block-103-105.json": b}
	if len(files) != len(want) {
		t.Fatalf("lease files %v; want %d", files, len(want))
	}
	for name, h := range want {
		le := files[name]
		if le == nil {
			t.Fatalf("no readable lease %s", name)
		}
		if le.HomeID != h.id || le.HomeDir != mustCanonical(t, h.dir) || le.Project != "p" || le.Worktree != "main" ||
			le.UID != os.Getuid() || le.Pid != os.Getpid() || le.Created.IsZero() {
			t.Errorf("lease %s = %+v; want home %s (%s), p/main, uid %d, pid %d, a time", name, le, h.id, h.dir, os.Getuid(), os.Getpid())
		}
	}
	// Keeping a block keeps its lease.
	if lo, _ := reserve(t, a, "p", "main", 3); lo != 100 {
		t.Errorf("home a again got lo %d; want its block at 100", lo)
	}
	if lo, hi, err := a.a.Release(context.Background(), "p", "main"); err != nil || lo != 100 || hi != 102 {
		t.Fatalf("release in a = %d-%d, %v; want 100-102", lo, hi, err)
	}
	files = leaseFiles(t, l)
	if _, ok := files["block-100-102.json"]; ok || files["block-103-105.json"] == nil {
		t.Errorf("after release in a, leases %v; want only b's", slices.Collect(mapKeys(files)))
	}
	if lo, _ := reserve(t, b, "q", "other", 3); lo != 100 {
		t.Errorf("home b's next world got lo %d; want the released 100", lo)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func mustCanonical(t *testing.T, dir string) string {
	t.Helper()
	d, err := canonicalDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkDisjoint fails when two of blocks overlap or one leaves rng.
func checkDisjoint(t *testing.T, blocks map[string][2]int, size int, rng [2]int) {
	t.Helper()
	var bs [][2]int
	for k, b := range blocks {
		if b[1]-b[0]+1 != size || b[0] < rng[0] || b[1] > rng[1] {
			t.Errorf("%s: block %v; want %d ports inside %v", k, b, size, rng)
		}
		bs = append(bs, b)
	}
	slices.SortFunc(bs, func(x, y [2]int) int { return x[0] - y[0] })
	for i := 1; i < len(bs); i++ {
		if bs[i][0] <= bs[i-1][1] {
			t.Errorf("blocks %v and %v overlap", bs[i-1], bs[i])
		}
	}
}

// TestLeasesConcurrentHomes: twenty goroutines over two homes, racing for
// one range, never get overlapping blocks, and every block is leased.
func TestLeasesConcurrentHomes(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{1000, 1999}
	homes := []*testHome{newHome(t, "", l, rng), newHome(t, "", l, rng)}
	const size = 4
	var mu sync.Mutex
	got := map[string][2]int{}
	var wg sync.WaitGroup
	for hi, h := range homes {
		for g := range 10 {
			wg.Go(func() {
				lo, hi2, err := h.a.Reserve(context.Background(), "p", "w"+strconv.Itoa(g), size, [2]int{})
				if err != nil {
					t.Errorf("home %d, w%d: %v", hi, g, err)
					return
				}
				mu.Lock()
				got[fmt.Sprintf("home%d/p/w%d", hi, g)] = [2]int{lo, hi2}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if len(got) != 20 {
		t.Fatalf("got %d blocks; want 20", len(got))
	}
	checkDisjoint(t, got, size, rng)
	files := leaseFiles(t, l)
	if len(files) != 20 {
		t.Errorf("%d lease files; want 20", len(files))
	}
	for i, h := range homes {
		bs, err := h.reg.PortBlocks(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			le := files[leaseName(b.Lo, b.Hi)]
			if le == nil || le.HomeID != h.id || le.Worktree != b.Worktree {
				t.Errorf("home %d's block %s/%s %d-%d has lease %+v; want its own", i, b.Project, b.Worktree, b.Lo, b.Hi, le)
			}
		}
	}
}

// TestLeasesConcurrentProcesses: three processes — this one and two
// re-executions of the test binary, each its own home — reserve at once
// from one range; no two blocks overlap.
func TestLeasesConcurrentProcesses(t *testing.T) {
	t.Parallel()
	leaseDir := t.TempDir()
	l := openTestLeases(t, leaseDir)
	rng := [2]int{2000, 2999}
	const size, n = 5, 6
	var cmds []*exec.Cmd
	var outs []io.ReadCloser
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLeaser$")
		cmd.Env = append(os.Environ(), "BINKY_PORTS_LEASER_DIR="+leaseDir, "BINKY_PORTS_LEASER_HOME="+t.TempDir(),
			"BINKY_PORTS_LEASER_N="+strconv.Itoa(n), "BINKY_PORTS_LEASER_SIZE="+strconv.Itoa(size),
			fmt.Sprintf("BINKY_PORTS_LEASER_RANGE=%d-%d", rng[0], rng[1]), "BINKY_PORTS_LEASER_ID=proc"+strconv.Itoa(i))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	h := newHome(t, "", l, rng)
	var mu sync.Mutex
	got := map[string][2]int{}
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			lo, hi, err := h.a.Reserve(context.Background(), "p", "w"+strconv.Itoa(g), size, [2]int{})
			if err != nil {
				t.Errorf("w%d: %v", g, err)
				return
			}
			mu.Lock()
			got["self/w"+strconv.Itoa(g)] = [2]int{lo, hi}
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, cmd := range cmds {
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			var key string
			var lo, hi int
			if _, err := fmt.Sscanf(sc.Text(), "leased %s %d %d", &key, &lo, &hi); err == nil {
				got[key] = [2]int{lo, hi}
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("leaser process %d: %v", i, err)
		}
	}
	if len(got) != 3*n {
		t.Fatalf("got %d blocks %v; want %d", len(got), got, 3*n)
	}
	checkDisjoint(t, got, size, rng)
	if files := leaseFiles(t, l); len(files) != 3*n {
		t.Errorf("%d lease files; want %d", len(files), 3*n)
	}
}

// TestHelperLeaser is a process of TestLeasesConcurrentProcesses.
func TestHelperLeaser(t *testing.T) {
	dir := os.Getenv("BINKY_PORTS_LEASER_DIR")
	if dir == "" {
		t.Skip("helper process for TestLeasesConcurrentProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_LEASER_N"))
	size, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_LEASER_SIZE"))
	id := os.Getenv("BINKY_PORTS_LEASER_ID")
	var rng [2]int
	fmt.Sscanf(os.Getenv("BINKY_PORTS_LEASER_RANGE"), "%d-%d", &rng[0], &rng[1])
	h := newHome(t, os.Getenv("BINKY_PORTS_LEASER_HOME"), openTestLeases(t, dir), rng)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			lo, hi, err := h.a.Reserve(context.Background(), "p", "w"+strconv.Itoa(g), size, [2]int{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("w%d: %v", g, err)
				return
			}
			fmt.Printf("leased %s/w%d %d %d\n", id, g, lo, hi)
		})
	}
	wg.Wait()
}

// TestLeaseOfGoneHomeIsReclaimed: a lease whose home directory was
// deleted, or whose home.id now names another home (deleted and made
// again), is reclaimed; a live home's lease never is.
func TestLeaseOfGoneHomeIsReclaimed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     func(t *testing.T, dir string)
		reclaim bool
	}{
		{"home deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"home made again", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, HomeIDFile), []byte("0123456789abcdef\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"home.id gone", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, HomeIDFile)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"home live", func(*testing.T, string) {}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openTestLeases(t, t.TempDir())
			rng := [2]int{300, 303}
			a := newHome(t, "", l, rng)
			// The other home lives in a directory of its own, so that
			// deleting it leaves its registry's cleanup to t.TempDir.
			bDir := filepath.Join(t.TempDir(), "home")
			if err := os.Mkdir(bDir, 0o755); err != nil {
				t.Fatal(err)
			}
			b := newHome(t, bDir, l, rng)
			reserve(t, b, "p", "main", 4)
			b.close()
			tc.end(t, bDir)
			lo, hi, err := a.a.Reserve(context.Background(), "p", "main", 4, [2]int{})
			if !tc.reclaim {
				if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "1 blocks leased by other binky homes on this machine") {
					t.Fatalf("reserve over a live home's lease = %d-%d, %v; want ErrExhausted counting 1 block of another home", lo, hi, err)
				}
				if le := leaseFiles(t, l)["block-300-303.json"]; le == nil || le.HomeID != b.id {
					t.Errorf("the live home's lease is now %+v; want it kept", le)
				}
				return
			}
			if err != nil || lo != 300 || hi != 303 {
				t.Fatalf("reserve over a gone home's lease = %d-%d, %v; want 300-303", lo, hi, err)
			}
			if le := leaseFiles(t, l)["block-300-303.json"]; le == nil || le.HomeID != a.id {
				t.Errorf("lease 300-303 is %+v; want home a's", le)
			}
		})
	}
}

// TestKeptBlockLeasedAgain: a block reserved without a lease (before leases
// existed) is leased when its world comes up again, unless another home
// leased some of its ports meanwhile: then the world moves, and its new
// block is leased.
func TestKeptBlockLeasedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{400, 499}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	plain, err := New(a.reg, Options{Range: rng, Bind: freeBind}) // no leases
	if err != nil {
		t.Fatal(err)
	}
	for _, wt := range []string{"kept", "taken"} {
		if _, _, err := plain.Reserve(ctx, "p", wt, 3, [2]int{}); err != nil {
			t.Fatal(err)
		}
	}
	// a/kept has 400-402 and a/taken 403-405, neither leased: home b,
	// seeing no lease there, leases 400-401.
	if lo, hi := reserve(t, b, "q", "x", 2); lo != 400 || hi != 401 {
		t.Fatalf("home b got %d-%d; want 400-401 (nothing leased)", lo, hi)
	}
	// Now a/kept (400-402) overlaps b's lease: it moves; a/taken (403-405)
	// does not: it is leased where it is.
	blk, created, err := a.a.ReserveBlock(ctx, "p", "taken", 3, [2]int{})
	if err != nil || created || blk.Lo != 403 {
		t.Fatalf("a/taken = %+v, new=%v, %v; want kept at 403", blk, created, err)
	}
	blk, created, err = a.a.ReserveBlock(ctx, "p", "kept", 3, [2]int{})
	if err != nil || !created || blk.Lo != 406 {
		t.Fatalf("a/kept = %+v, new=%v, %v; want moved to 406", blk, created, err)
	}
	files := leaseFiles(t, l)
	for name, home := range map[string]*testHome{"block-400-401.json": b, "block-403-405.json": a, "block-406-408.json": a} {
		if le := files[name]; le == nil || le.HomeID != home.id {
			t.Errorf("lease %s = %+v; want home %s's", name, le, home.id)
		}
	}
	if len(files) != 3 {
		t.Errorf("leases %v; want 3", slices.Collect(mapKeys(files)))
	}
	// Moving again (more ports) drops the old lease.
	if lo, hi := reserve(t, a, "p", "kept", 5); lo != 406 || hi != 410 {
		t.Errorf("a/kept with 5 ports got %d-%d; want 406-410", lo, hi)
	}
	files = leaseFiles(t, l)
	if _, ok := files["block-406-408.json"]; ok || files["block-406-410.json"] == nil {
		t.Errorf("after the move, leases %v; want 406-410 and not 406-408", slices.Collect(mapKeys(files)))
	}
}

// TestSyncLeases: at daemon start, this home's leases its registry no
// longer has go, its unleased blocks are leased, and one another home
// leased meanwhile is reported.
func TestSyncLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{500, 599}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	reserve(t, a, "p", "orphan", 2)                                       // 500-501
	if _, err := a.reg.ReleasePortBlock(ctx, "p", "orphan"); err != nil { // as DeleteWorktree does, no lease lock
		t.Fatal(err)
	}
	plain, err := New(a.reg, Options{Range: rng, Bind: freeBind})
	if err != nil {
		t.Fatal(err)
	}
	plain.Reserve(ctx, "p", "unleased", 2, [2]int{})  // 500-501 again, in the registry only
	plain.Reserve(ctx, "p", "contested", 2, [2]int{}) // 502-503
	// Home b leased 502-503 while a's block there had no lease.
	if err := l.write(b.a.newLease("q", "x", 502, 503)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir(), ".tmp-leftover"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.a.SyncLeases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0].Worktree != "orphan" {
		t.Errorf("removed %+v; want the orphan's lease", res.Removed)
	}
	if len(res.Leased) != 1 || res.Leased[0].Worktree != "unleased" {
		t.Errorf("leased %+v; want p/unleased", res.Leased)
	}
	if len(res.Contested) != 1 || res.Contested[0].Worktree != "contested" {
		t.Errorf("contested %+v; want p/contested", res.Contested)
	}
	files := leaseFiles(t, l)
	if le := files["block-500-501.json"]; le == nil || le.HomeID != a.id || le.Worktree != "unleased" {
		t.Errorf("lease 500-501 = %+v; want a's p/unleased", le)
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), ".tmp-leftover")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover temporary file: %v; want it removed", err)
	}
	// The contested world moves at its next reservation.
	if lo, _ := reserve(t, a, "p", "contested", 2); lo != 504 {
		t.Errorf("a/contested got lo %d; want 504", lo)
	}
}

// TestLeasesNeedHomeID: without its home.id a home leases nothing: every
// other home would take its leases as a gone home's.
func TestLeasesNeedHomeID(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	a := newHome(t, "", l, [2]int{600, 699})
	if err := os.WriteFile(filepath.Join(a.dir, HomeIDFile), []byte("someone-else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := a.a.Reserve(context.Background(), "p", "w", 2, [2]int{})
	if err == nil || !strings.Contains(err.Error(), HomeIDFile) {
		t.Errorf("reserve with a wrong home.id = %v; want an error naming %s", err, HomeIDFile)
	}
	if len(leaseFiles(t, l)) != 0 {
		t.Errorf("a lease was written")
	}
	if _, err := New(a.reg, Options{Leases: l}); err == nil {
		t.Errorf("New with leases but no home: nil error; want one")
	}
}

// TestLeaseLockHonoursContext: a reservation waiting for the lease lock
// gives up when its context ends, and the lock stays usable.
func TestLeaseLockHonoursContext(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	a := newHome(t, "", l, [2]int{700, 799})
	other := openTestLeases(t, l.Dir()) // another process's view: its own semaphore
	unlock, err := other.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := a.a.Reserve(ctx, "p", "w", 2, [2]int{})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("reserve while locked, cancelled = %v; want context.Canceled", err)
	}
	unlock()
	if lo, _ := reserve(t, a, "p", "w", 2); lo != 700 {
		t.Errorf("after unlock got lo %d; want 700", lo)
	}
}

func TestParseLeaseName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string][2]int{
		"block-20000-20004.json": {20000, 20004},
		"block-1-1.json":         {1, 1},
	} {
		if lo, hi, ok := parseLeaseName(name); !ok || lo != want[0] || hi != want[1] {
			t.Errorf("parseLeaseName(%q) = %d, %d, %v; want %v", name, lo, hi, ok, want)
		}
	}
	for _, bad := range []string{".lock", "block-2-1.json", "block-0-3.json", "block-1-70000.json", "block-01-3.json", "block-1-3.json.tmp", "block-1.json", "block-a-b.json"} {
		if _, _, ok := parseLeaseName(bad); ok {
			t.Errorf("parseLeaseName(%q) accepted it", bad)
		}
	}
}

func TestDefaultLeaseDir(t *testing.T) {
	t.Setenv(LeaseDirEnv, "/somewhere/leases")
	if got := DefaultLeaseDir(); got != "/somewhere/leases" {
		t.Errorf("DefaultLeaseDir with %s set = %q", LeaseDirEnv, got)
	}
	t.Setenv(LeaseDirEnv, "")
	if got, want := DefaultLeaseDir(), defaultLeaseDir(); got != want || want == "" {
		t.Errorf("DefaultLeaseDir = %q; want %q", got, want)
	}
}
