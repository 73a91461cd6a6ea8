package ports

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	"time"

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

// openTestLeases opens the store in dir and makes it (and this user's
// subdirectory) at once.
func openTestLeases(t testing.TB, dir string) *Leases {
	t.Helper()
	return openTestLeasesWith(t, dir, LeaseOptions{})
}

func openTestLeasesWith(t testing.TB, dir string, opts LeaseOptions) *Leases {
	t.Helper()
	l, err := OpenLeases(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
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

// noDaemon makes h's leases name no daemon, so that only its home keeps
// their claims (the test process itself outlives every home).
func (h *testHome) noDaemon() { h.a.pid, h.a.pidStart = 0, 0 }

// leaseFiles reads every lease file in every user's subdirectory of l, by
// file name; nil for one that does not parse.
func leaseFiles(t *testing.T, l *Leases) map[string]*Lease {
	t.Helper()
	out := map[string]*Lease{}
	subs, err := os.ReadDir(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if _, ok := parseDirName(s.Name()); !ok || !s.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(l.Dir(), s.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if _, _, ok := parseLeaseName(e.Name()); !ok {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(l.Dir(), s.Name(), e.Name()))
			le, _ := parseLease(b, e.Name())
			out[e.Name()] = le
		}
	}
	return out
}

// ownSub is this user's subdirectory of l.
func ownSub(t testing.TB, l *Leases) string {
	t.Helper()
	sub, err := l.own()
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func me(t testing.TB) string {
	t.Helper()
	o, err := currentOwner()
	if err != nil {
		t.Fatal(err)
	}
	return o
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
	rng := [2]int{20100, 20199}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	if lo, hi := reserve(t, a, "p", "main", 3); lo != 20100 || hi != 20102 {
		t.Fatalf("home a got %d-%d; want 20100-20102", lo, hi)
	}
	if lo, hi := reserve(t, b, "p", "main", 3); lo != 20103 || hi != 20105 {
		t.Fatalf("home b got %d-%d; want 20103-20105, after home a's lease", lo, hi)
	}
	files := leaseFiles(t, l)
	want := map[string]*testHome{"block-20100-20102.json": a, "block-20103-20105.json": b}
	if len(files) != len(want) {
		t.Fatalf("lease files %v; want %d", files, len(want))
	}
	for name, h := range want {
		le := files[name]
		if le == nil {
			t.Fatalf("no readable lease %s", name)
		}
		if le.HomeID != h.id || le.HomeDir != mustCanonical(t, h.dir) || le.Project != "p" || le.Worktree != "main" ||
			leaseOwner(le) != me(t) || le.Pid != os.Getpid() || le.PidStart != procStart(os.Getpid()) || le.Created.IsZero() {
			t.Errorf("lease %s = %+v; want home %s (%s), p/main, user %s, pid %d, a time", name, le, h.id, h.dir, me(t), os.Getpid())
		}
	}
	// Keeping a block keeps its lease.
	if lo, _ := reserve(t, a, "p", "main", 3); lo != 20100 {
		t.Errorf("home a again got lo %d; want its block at 20100", lo)
	}
	if lo, hi, err := a.a.Release(context.Background(), "p", "main"); err != nil || lo != 20100 || hi != 20102 {
		t.Fatalf("release in a = %d-%d, %v; want 20100-20102", lo, hi, err)
	}
	files = leaseFiles(t, l)
	if _, ok := files["block-20100-20102.json"]; ok || files["block-20103-20105.json"] == nil {
		t.Errorf("after release in a, leases %v; want only b's", slices.Collect(mapKeys(files)))
	}
	if lo, _ := reserve(t, b, "q", "other", 3); lo != 20100 {
		t.Errorf("home b's next world got lo %d; want the released 20100", lo)
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

// checkLeasesDisjoint fails when two lease files anywhere in l overlap.
func checkLeasesDisjoint(t *testing.T, l *Leases) map[string]*Lease {
	t.Helper()
	files := leaseFiles(t, l)
	bs := map[string][2]int{}
	for name, le := range files {
		if le == nil {
			t.Errorf("lease %s does not parse", name)
			continue
		}
		bs[name] = [2]int{le.Lo, le.Hi}
	}
	var sorted [][2]int
	for _, b := range bs {
		sorted = append(sorted, b)
	}
	slices.SortFunc(sorted, func(x, y [2]int) int { return x[0] - y[0] })
	for i := 1; i < len(sorted); i++ {
		if sorted[i][0] <= sorted[i-1][1] {
			t.Errorf("leases %v and %v overlap", sorted[i-1], sorted[i])
		}
	}
	return files
}

// TestLeasesConcurrentHomes: twenty goroutines over two homes, racing for
// one range, never get overlapping blocks, and every block is leased.
func TestLeasesConcurrentHomes(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{21000, 21999}
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

// TestLeasesRacingLockDomains: two homes whose stores lock apart — each
// in a subdirectory of its own, as two users' are — reserve twenty blocks
// each from one range at once. No lock is shared, so only the re-check
// after each write keeps them apart: no two kept blocks or leases
// overlap. (Both subdirectories are this user's: in one process two uids
// cannot be had; TestTwoUsersRace runs two real ones as root.)
func TestLeasesRacingLockDomains(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := [2]int{22000, 22199}
	var homes []*testHome
	for n := 1; n <= 2; n++ {
		l := openTestLeases(t, dir)
		l.subdir = ownDirName(me(t), n)
		homes = append(homes, newHome(t, "", l, rng))
	}
	const size, per = 3, 20
	var mu sync.Mutex
	got := map[string][2]int{}
	var wg sync.WaitGroup
	for i, h := range homes {
		for g := range per {
			wg.Go(func() {
				lo, hi, err := h.a.Reserve(context.Background(), "p", "w"+strconv.Itoa(g), size, [2]int{})
				if err != nil {
					t.Errorf("home %d, w%d: %v", i, g, err)
					return
				}
				mu.Lock()
				got[fmt.Sprintf("home%d/w%d", i, g)] = [2]int{lo, hi}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if len(got) != 2*per {
		t.Fatalf("got %d blocks; want %d", len(got), 2*per)
	}
	checkDisjoint(t, got, size, rng)
	if files := checkLeasesDisjoint(t, homes[0].a.leases); len(files) != 2*per {
		t.Errorf("%d lease files; want %d", len(files), 2*per)
	}
}

// TestLeaseRaceBacksOff: when another user's home leases the same block
// between this home's write and its re-read, this home removes its lease
// and takes another block; the other keeps its own.
func TestLeaseRaceBacksOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := [2]int{23000, 23099}
	la, lb := openTestLeases(t, dir), openTestLeases(t, dir)
	la.subdir, lb.subdir = ownDirName(me(t), 1), ownDirName(me(t), 2)
	a, b := newHome(t, "", la, rng), newHome(t, "", lb, rng)
	races := 0
	a.a.afterWrite = func(lo, hi int) {
		if races > 0 {
			return
		}
		races++
		// b leases the same ports now, in its own lock domain.
		if err := lb.write(ownSub(t, lb), b.a.newLease("q", "x", lo, hi)); err != nil {
			t.Error(err)
		}
	}
	lo, hi := reserve(t, a, "p", "w", 4)
	if lo <= 23003 || hi > rng[1] || hi-lo != 3 {
		t.Errorf("home a got %d-%d; want 4 ports in %v past 23000-23003, the block b took as it wrote", lo, hi, rng)
	}
	files := checkLeasesDisjoint(t, la)
	if le := files["block-23000-23003.json"]; le == nil || le.HomeID != b.id {
		t.Errorf("lease 23000-23003 = %+v; want b's", le)
	}
	if le := files[leaseName(lo, hi)]; le == nil || le.HomeID != a.id {
		t.Errorf("lease %d-%d = %+v; want a's", lo, hi, le)
	}
	if len(files) != 2 {
		t.Errorf("leases %v; want 2", slices.Collect(mapKeys(files)))
	}
}

// TestLeasesConcurrentProcesses: three processes — this one and two
// re-executions of the test binary, each its own home — reserve at once
// from one range; no two blocks overlap.
func TestLeasesConcurrentProcesses(t *testing.T) {
	t.Parallel()
	leaseDir := t.TempDir()
	l := openTestLeases(t, leaseDir)
	rng := [2]int{24000, 24999}
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
	got := reserveAtOnce(t, h, "self", n, size)
	for i, cmd := range cmds {
		for key, b := range scanLeased(outs[i]) {
			got[key] = b
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

// scanLeased reads the "leased <key> <lo> <hi>" lines a leaser prints.
func scanLeased(r io.Reader) map[string][2]int {
	out := map[string][2]int{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var key string
		var lo, hi int
		if _, err := fmt.Sscanf(sc.Text(), "leased %s %d %d", &key, &lo, &hi); err == nil {
			out[key] = [2]int{lo, hi}
		}
	}
	return out
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
	leaseMany(t, h, id, n, size)
}

// leaseMany reserves n blocks of size at once in h and prints each as
// "leased <id>/w<g> <lo> <hi>".
func leaseMany(t *testing.T, h *testHome, id string, n, size int) {
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
// again), and whose daemon does not run, is reclaimed; a live home's lease
// never is, nor a deleted home's whose daemon still runs.
func TestLeaseOfGoneHomeIsReclaimed(t *testing.T) {
	t.Parallel()
	removeHome := func(t *testing.T, dir string) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		end     func(t *testing.T, dir string)
		daemon  bool // the lease names this (running) process as its daemon
		reclaim bool
	}{
		{"home deleted", removeHome, false, true},
		{"home made again", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, HomeIDFile), []byte("0123456789abcdef\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"home.id gone", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, HomeIDFile)); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"home live", func(*testing.T, string) {}, false, false},
		{"home deleted, daemon running", removeHome, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.daemon && procStart(os.Getpid()) == 0 {
				t.Skip("this platform cannot tell a process's start time")
			}
			l := openTestLeases(t, t.TempDir())
			rng := [2]int{20300, 20303}
			a := newHome(t, "", l, rng)
			// The other home lives in a directory of its own, so that
			// deleting it leaves its registry's cleanup to t.TempDir.
			bDir := filepath.Join(t.TempDir(), "home")
			if err := os.Mkdir(bDir, 0o755); err != nil {
				t.Fatal(err)
			}
			b := newHome(t, bDir, l, rng)
			if !tc.daemon {
				b.noDaemon()
			}
			reserve(t, b, "p", "main", 4)
			b.close()
			tc.end(t, bDir)
			lo, hi, err := a.a.Reserve(context.Background(), "p", "main", 4, [2]int{})
			if !tc.reclaim {
				if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "1 blocks leased by other binky homes on this machine") {
					t.Fatalf("reserve over a live home's lease = %d-%d, %v; want ErrExhausted counting 1 block of another home", lo, hi, err)
				}
				if le := leaseFiles(t, l)["block-20300-20303.json"]; le == nil || le.HomeID != b.id {
					t.Errorf("the live home's lease is now %+v; want it kept", le)
				}
				return
			}
			if err != nil || lo != 20300 || hi != 20303 {
				t.Fatalf("reserve over a gone home's lease = %d-%d, %v; want 20300-20303", lo, hi, err)
			}
			if le := leaseFiles(t, l)["block-20300-20303.json"]; le == nil || le.HomeID != a.id {
				t.Errorf("lease 20300-20303 is %+v; want home a's", le)
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
	rng := [2]int{20400, 20499}
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
	// a/kept has 20400-20402 and a/taken 20403-20405, neither leased:
	// home b, seeing no lease there, leases 20400-20401.
	if lo, hi := reserve(t, b, "q", "x", 2); lo != 20400 || hi != 20401 {
		t.Fatalf("home b got %d-%d; want 20400-20401 (nothing leased)", lo, hi)
	}
	// Now a/kept (20400-20402) overlaps b's lease: it moves; a/taken
	// (20403-20405) does not: it is leased where it is.
	blk, created, err := a.a.ReserveBlock(ctx, "p", "taken", 3, [2]int{})
	if err != nil || created || blk.Lo != 20403 {
		t.Fatalf("a/taken = %+v, new=%v, %v; want kept at 20403", blk, created, err)
	}
	blk, created, err = a.a.ReserveBlock(ctx, "p", "kept", 3, [2]int{})
	if err != nil || !created || blk.Lo != 20406 {
		t.Fatalf("a/kept = %+v, new=%v, %v; want moved to 20406", blk, created, err)
	}
	files := leaseFiles(t, l)
	for name, home := range map[string]*testHome{"block-20400-20401.json": b, "block-20403-20405.json": a, "block-20406-20408.json": a} {
		if le := files[name]; le == nil || le.HomeID != home.id {
			t.Errorf("lease %s = %+v; want home %s's", name, le, home.id)
		}
	}
	if len(files) != 3 {
		t.Errorf("leases %v; want 3", slices.Collect(mapKeys(files)))
	}
	// Moving again (more ports) drops the old lease.
	if lo, hi := reserve(t, a, "p", "kept", 5); lo != 20406 || hi != 20410 {
		t.Errorf("a/kept with 5 ports got %d-%d; want 20406-20410", lo, hi)
	}
	files = leaseFiles(t, l)
	if _, ok := files["block-20406-20408.json"]; ok || files["block-20406-20410.json"] == nil {
		t.Errorf("after the move, leases %v; want 20406-20410 and not 20406-20408", slices.Collect(mapKeys(files)))
	}
}

// writeOldLease writes le as the lease format before per-user
// subdirectories did: at the top of the lease directory.
func writeOldLease(t *testing.T, l *Leases, le *Lease) string {
	t.Helper()
	b, err := json.Marshal(le)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(l.Dir(), leaseName(le.Lo, le.Hi))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSyncLeases: at daemon start, this home's leases its registry no
// longer has go, its unleased blocks are leased, one another home leased
// meanwhile is reported, and its old-format leases are removed while
// another home's are only reported.
func TestSyncLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{20500, 20599}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	reserve(t, a, "p", "orphan", 2)                                       // 20500-20501
	if _, err := a.reg.ReleasePortBlock(ctx, "p", "orphan"); err != nil { // as DeleteWorktree does, no lease lock
		t.Fatal(err)
	}
	plain, err := New(a.reg, Options{Range: rng, Bind: freeBind})
	if err != nil {
		t.Fatal(err)
	}
	plain.Reserve(ctx, "p", "unleased", 2, [2]int{})  // 20500-20501 again, in the registry only
	plain.Reserve(ctx, "p", "contested", 2, [2]int{}) // 20502-20503
	// Home b leased 20502-20503 while a's block there had no lease.
	sub := ownSub(t, l)
	if err := l.write(sub, b.a.newLease("q", "x", 20502, 20503)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, ".tmp-leftover"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mineOld := writeOldLease(t, l, a.a.newLease("p", "old", 20590, 20591))
	othersOld := writeOldLease(t, l, b.a.newLease("q", "old", 20592, 20593))
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
	if le := files["block-20500-20501.json"]; le == nil || le.HomeID != a.id || le.Worktree != "unleased" {
		t.Errorf("lease 20500-20501 = %+v; want a's p/unleased", le)
	}
	if _, err := os.Stat(filepath.Join(sub, ".tmp-leftover")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover temporary file: %v; want it removed", err)
	}
	if _, err := os.Stat(mineOld); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("this home's old-format lease: %v; want it removed", err)
	}
	if _, err := os.Stat(othersOld); err != nil {
		t.Errorf("another home's old-format lease: %v; want it left", err)
	}
	if !slices.ContainsFunc(res.Ignored, func(ig IgnoredLease) bool {
		return ig.Path == othersOld && strings.Contains(ig.Reason, "old-format")
	}) {
		t.Errorf("ignored %v; want %s reported as an old-format lease", res.Ignored, othersOld)
	}
	// The contested world moves at its next reservation.
	if lo, _ := reserve(t, a, "p", "contested", 2); lo != 20504 {
		t.Errorf("a/contested got lo %d; want 20504", lo)
	}
}

// TestReserveSyncsFirst: a reservation made before SyncLeases ever got
// through runs it first, so blocks without a lease are leased.
func TestReserveSyncsFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{20600, 20699}
	a := newHome(t, "", l, rng)
	plain, err := New(a.reg, Options{Range: rng, Bind: freeBind})
	if err != nil {
		t.Fatal(err)
	}
	plain.Reserve(ctx, "p", "unleased", 2, [2]int{}) // 20600-20601
	if a.a.LeasesSynced() {
		t.Fatal("LeasesSynced before any sync")
	}
	reserve(t, a, "p", "other", 2)
	if !a.a.LeasesSynced() {
		t.Error("LeasesSynced after a reservation = false; want true")
	}
	if le := leaseFiles(t, l)["block-20600-20601.json"]; le == nil || le.Worktree != "unleased" {
		t.Errorf("lease 20600-20601 = %+v; want p/unleased's, leased by the sync the reservation ran", le)
	}
}

// TestLeasesNeedHomeID: without its home.id a home leases nothing: every
// other home would take its leases as a gone home's.
func TestLeasesNeedHomeID(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	a := newHome(t, "", l, [2]int{20600, 20699})
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
	a := newHome(t, "", l, [2]int{20700, 20799})
	other := openTestLeases(t, l.Dir()) // another process's view: its own semaphore
	_, unlock, err := other.lock(context.Background())
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
	if lo, _ := reserve(t, a, "p", "w", 2); lo != 20700 {
		t.Errorf("after unlock got lo %d; want 20700", lo)
	}
}

// TestLeaseLockWaitIsBounded: while another holder keeps this user's lock
// (here another open of it in this process), a reservation fails after the
// store's LockWait with a *LockBusyError naming the lock file, and
// succeeds once the lock is free.
func TestLeaseLockWaitIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openTestLeasesWith(t, dir, LeaseOptions{LockWait: 50 * time.Millisecond})
	a := newHome(t, "", l, [2]int{20800, 20899})
	other := openTestLeases(t, dir)
	_, unlock, err := other.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = a.a.Reserve(context.Background(), "p", "w", 2, [2]int{})
	var busy *LockBusyError
	lockPath := filepath.Join(ownSub(t, l), lockName)
	if !errors.As(err, &busy) || busy.Path != lockPath || !strings.Contains(err.Error(), "port lease lock "+lockPath+" is held by ") {
		t.Fatalf("reserve while the lock is held = %v; want a LockBusyError naming %s", err, lockPath)
	}
	if runtimeHasLockHolders() && (busy.Pid != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid()))) {
		t.Errorf("holder = pid %d (%v); want this process, %d", busy.Pid, err, os.Getpid())
	}
	unlock()
	reserve(t, a, "p", "w", 2)
}

// TestLeaseLockQueuedTryOnce: once a locker of this process waited the
// whole bound in vain, the next one tries once and fails too, rather than
// wait the bound again (a reservation queued behind the daemon's sync
// would otherwise wait twice as long); once the lock is free it is taken.
func TestLeaseLockQueuedTryOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openTestLeasesWith(t, dir, LeaseOptions{LockWait: 50 * time.Millisecond})
	other := openTestLeases(t, dir)
	_, unlock, err := other.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var busy *LockBusyError
	if _, _, err := l.lock(context.Background()); !errors.As(err, &busy) {
		t.Fatalf("first lock while held = %v; want a LockBusyError", err)
	}
	// A bound the test could never wait out: only the single try ends
	// this lock before the context does.
	l.lockWait = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := l.lock(ctx); !errors.As(err, &busy) {
		t.Fatalf("second lock while held = %v; want a LockBusyError at its one try", err)
	}
	unlock()
	_, unlock, err = l.lock(ctx)
	if err != nil {
		t.Fatalf("lock once free = %v", err)
	}
	unlock()
	if l.busySince.Load() != 0 {
		t.Error("busySince kept after the lock was taken")
	}
}

// TestReserveRefusesWideWorld: a world asking for more than MaxBlock ports
// is refused before anything is searched or leased.
func TestReserveRefusesWideWorld(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	a := newHome(t, "", l, [2]int{30000, 39999})
	_, _, err := a.a.Reserve(context.Background(), "p", "w", MaxBlock+1, [2]int{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("asks for %d ports, more than the %d", MaxBlock+1, MaxBlock)) {
		t.Errorf("reserve of %d ports = %v; want it refused naming %d", MaxBlock+1, err, MaxBlock)
	}
	if lo, hi := reserve(t, a, "p", "w", MaxBlock); hi-lo+1 != MaxBlock {
		t.Errorf("reserve of %d ports = %d-%d", MaxBlock, lo, hi)
	}
	if len(leaseFiles(t, l)) != 1 {
		t.Errorf("leases %v; want the one of %d ports", leaseFiles(t, l), MaxBlock)
	}
}

// TestInvalidLeasesDoNotBlock: lease files that claim nothing — junk, a
// lease whose name and content disagree, one wider than a world's block,
// one naming a home that is not its user's, another user — never block a
// reservation, and each is reported with its path, owner and reason.
// (Other users' files: TestOtherUsersLeasesDoNotBlock, as root.)
func TestInvalidLeasesDoNotBlock(t *testing.T) {
	t.Parallel()
	l := openTestLeases(t, t.TempDir())
	rng := [2]int{25000, 25999}
	a, b := newHome(t, "", l, rng), newHome(t, "", l, rng)
	sub := ownSub(t, l)
	write := func(name string, content []byte) string {
		p := filepath.Join(sub, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	asJSON := func(le *Lease) []byte {
		b, _ := json.Marshal(le)
		return b
	}
	wide := b.a.newLease("q", "x", 25000, 25000+MaxBlock)
	otherUser := b.a.newLease("q", "y", 25000, 25004)
	otherUser.UID, otherUser.SID = 4242, "S-1-5-21-1-2-3-4242"
	want := map[string]string{
		write("block-25000-65535.json", []byte("{}")):                   "names ports 0-0",
		write("block-25000-25009.json", []byte("not json")):             "is not a port lease",
		write(leaseName(wide.Lo, wide.Hi), asJSON(wide)):                fmt.Sprintf("more than one world's block may (%d)", MaxBlock),
		write(leaseName(otherUser.Lo, otherUser.Hi), asJSON(otherUser)): "but belongs to",
		writeOldLease(t, l, b.a.newLease("q", "z", 25000, 25003)):       "old-format",
	}
	if lo, hi := reserve(t, a, "p", "w", 4); lo != 25000 || hi != 25003 {
		t.Errorf("reserve over invalid leases = %d-%d; want 25000-25003", lo, hi)
	}
	checkIgnored(t, ignoredOf(a.a), want, me(t))
	// Doctor's read-only view reports the same.
	rep, err := InspectLeases(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	checkIgnored(t, rep.Ignored, want, me(t))
	if rep.Mine != sub || len(rep.Counted) != 1 {
		t.Errorf("InspectLeases: mine %q, counted %v; want %s and a's lease", rep.Mine, rep.Counted, sub)
	}
}

// checkIgnored fails unless got reports exactly the paths of want, each
// with its reason (a substring) and owner.
func checkIgnored(t *testing.T, got []IgnoredLease, want map[string]string, owner string) {
	t.Helper()
	seen := map[string]bool{}
	for _, ig := range got {
		reason, ok := want[ig.Path]
		if !ok {
			t.Errorf("ignored %s; want it not reported", ig)
			continue
		}
		seen[ig.Path] = true
		line := ig.String()
		wantStart := "ignored port lease " + ig.Path + " (owner " + ownerLabel(owner) + "): "
		if ig.Owner != owner || !strings.HasPrefix(line, wantStart) || !strings.Contains(ig.Reason, reason) {
			t.Errorf("ignored %q; want it to start %q and say %q", line, wantStart, reason)
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("%s was not reported ignored (got %v)", p, got)
		}
	}
}

func TestCheckClaim(t *testing.T) {
	t.Parallel()
	o := me(t)
	le := func(lo, hi int) *Lease {
		l := &Lease{Lo: lo, Hi: hi}
		stampOwner(l, o)
		return l
	}
	unnamed := &Lease{Lo: 30000, Hi: 30001, UID: -1}
	low := unprivilegedPortStart() - 4
	tests := []struct {
		name            string
		le              *Lease
		owner, dirOwner string
		want            string // "" = the claim holds
	}{
		{"holds", le(30000, 30009), o, o, ""},
		{"widest block", le(30000, 30000+MaxBlock-1), o, o, ""},
		{"too wide", le(30000, 30000+MaxBlock), o, o, "more than one world's block"},
		{"another owner", le(30000, 30009), "4242", "4242", "but belongs to"},
		{"another directory", le(30000, 30009), o, "4242", "lies in the lease directory of"},
		{"names nobody", unnamed, o, o, "names no user"},
	}
	if low > 0 && !isAdminOwner(o) {
		tests = append(tests, struct {
			name            string
			le              *Lease
			owner, dirOwner string
			want            string
		}{"privileged ports", le(low, low+1), o, o, "which " + ownerLabel(o) + " cannot bind"})
	}
	for _, tc := range tests {
		err := checkClaim(tc.le, tc.owner, tc.dirOwner)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want the claim to hold", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
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

func TestParseDirName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		ownerPrefix + "1001":    "1001",
		ownerPrefix + "1001.2":  "1001",
		ownerPrefix + "0.16":    "0",
		ownerPrefix + "S-1-5-1": "S-1-5-1",
	} {
		if got, ok := parseDirName(name); !ok || got != want {
			t.Errorf("parseDirName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, bad := range []string{ownerPrefix, ownerPrefix + ".2", ownerPrefix + "1.1", ownerPrefix + "1.02", ownerPrefix + "1.17", ownerPrefix + "1.x", "block-1-2.json", ".lock"} {
		if got, ok := parseDirName(bad); ok {
			t.Errorf("parseDirName(%q) = %q; want it refused", bad, got)
		}
	}
	for n := 1; n <= maxOwnDirs; n++ {
		if got, ok := parseDirName(ownDirName("1001", n)); !ok || got != "1001" {
			t.Errorf("parseDirName(ownDirName(1001, %d)) = %q, %v", n, got, ok)
		}
	}
}

func TestParseLocksHolder(t *testing.T) {
	t.Parallel()
	text := []byte("1: POSIX  ADVISORY  WRITE 3850 fe:00:786446 0 EOF\n" +
		"2: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF\n" +
		"2: -> FLOCK  ADVISORY  WRITE 5555 00:2f:1234 0 EOF\n" +
		"3: FLOCK  ADVISORY  WRITE 77 00:31:999 0 EOF\n")
	for _, tc := range []struct {
		major, minor uint32
		ino          uint64
		want         int
	}{
		{0, 0x2f, 1234, 4242},
		{0xfe, 0, 786446, 3850},
		{0, 0x40, 999, 77}, // another device (an overlay): the one holder of the inode
		{0, 0x2f, 1, 0},
	} {
		if got := parseLocksHolder(text, tc.major, tc.minor, tc.ino); got != tc.want {
			t.Errorf("holder of %02x:%02x:%d = %d; want %d", tc.major, tc.minor, tc.ino, got, tc.want)
		}
	}
}

func TestParseStatStart(t *testing.T) {
	t.Parallel()
	line := "4242 (binkyd (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 9 0 123456 1000 10 18446744073709551615\n"
	if got, err := parseStatStart([]byte(line)); err != nil || got != 123456 {
		t.Errorf("parseStatStart = %d, %v; want 123456", got, err)
	}
	for _, bad := range []string{"", "4242 binkyd S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 9 0 zz 1"} {
		if _, err := parseStatStart([]byte(bad)); err == nil {
			t.Errorf("parseStatStart(%q) accepted it", bad)
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

// ignoredOf is what a's last view ignored.
func ignoredOf(a *Allocator) []IgnoredLease {
	list, _ := a.IgnoredLeases()
	return list
}

// reserveAtOnce reserves a block of size for each of n worktrees of h at
// once, and returns each as who/w<i> → its block.
func reserveAtOnce(t *testing.T, h *testHome, who string, n, size int) map[string][2]int {
	t.Helper()
	var mu sync.Mutex
	got := map[string][2]int{}
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			lo, hi, err := h.a.Reserve(context.Background(), "p", "w"+strconv.Itoa(g), size, [2]int{})
			if err != nil {
				t.Errorf("%s w%d: %v", who, g, err)
				return
			}
			mu.Lock()
			got[who+"/w"+strconv.Itoa(g)] = [2]int{lo, hi}
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}
