package ports

import (
	"context"
	"errors"
	"fmt"
	"github.com/binkyhq/binky/internal/wine"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

func openRegistry(t *testing.T, path string) *registry.Registry {
	t.Helper()
	reg, err := registry.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

func newAllocator(t *testing.T, opts Options) (*Allocator, *registry.Registry) {
	t.Helper()
	reg := openRegistry(t, filepath.Join(t.TempDir(), registry.FileName))
	a, err := New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, reg
}

// fakeBind pretends to bind: held maps "host:port" (or "host:*") to the
// error binding it gives; everything else binds. It records what it was
// asked.
type fakeBind struct {
	mu    sync.Mutex
	held  map[string]error
	asked []string
}

func (f *fakeBind) bind(network, address string) (io.Closer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, address)
	host, _, _ := net.SplitHostPort(address)
	for _, k := range []string{address, net.JoinHostPort(host, "*")} {
		if err, ok := f.held[k]; ok {
			return nil, &net.OpError{Op: "listen", Net: network, Err: err}
		}
	}
	return io.NopCloser(nil), nil
}

func TestProbeEachAddress(t *testing.T) {
	wine.Skip(t, "binds in 100-120 find most ports held, not yet diagnosed")
	t.Parallel()
	inUse := syscall.EADDRINUSE
	tests := []struct {
		name   string
		held   map[string]error
		lo, hi int
	}{
		{"nothing held", nil, 100, 102},
		{"held on 127.0.0.1", map[string]error{"127.0.0.1:101": inUse}, 102, 104},
		{"held on ::1", map[string]error{"[::1]:101": inUse}, 102, 104},
		{"held on 0.0.0.0", map[string]error{"0.0.0.0:101": inUse}, 102, 104},
		{"two held: skips past each", map[string]error{"0.0.0.0:100": inUse, "127.0.0.1:103": inUse}, 104, 106},
		{"no IPv6 on this host", map[string]error{"[::1]:*": syscall.EADDRNOTAVAIL}, 100, 102},
		{"no IPv6 support at all", map[string]error{"[::1]:*": syscall.EAFNOSUPPORT}, 100, 102},
		{"::1 refused otherwise is held", map[string]error{"[::1]:100": syscall.EACCES}, 101, 103},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fb := &fakeBind{held: tc.held}
			a, _ := newAllocator(t, Options{Range: [2]int{100, 120}, Bind: fb.bind})
			lo, hi, err := a.Reserve(context.Background(), "p", "w", 3, [2]int{})
			if err != nil {
				t.Fatal(err)
			}
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("block = %d-%d; want %d-%d", lo, hi, tc.lo, tc.hi)
			}
			for _, host := range []string{"127.0.0.1", "[::1]", "0.0.0.0"} {
				if !slices.Contains(fb.asked, fmt.Sprintf("%s:%d", host, tc.hi)) {
					t.Errorf("port %d was not probed on %s (asked %v)", tc.hi, host, fb.asked)
				}
			}
		})
	}
}

func TestReserveArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fb := &fakeBind{}
	a, reg := newAllocator(t, Options{Range: [2]int{200, 299}, Bind: fb.bind})
	if lo, hi, err := a.Reserve(ctx, "p", "none", 0, [2]int{}); err != nil || lo != 0 || hi != 0 {
		t.Errorf("size 0 = %d-%d, %v; want 0-0, nil", lo, hi, err)
	}
	if _, err := reg.PortBlock(ctx, "p", "none"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("size 0 recorded a block: err = %v; want ErrNotFound", err)
	}
	for _, bad := range []struct {
		size int
		rng  [2]int
	}{{-1, [2]int{}}, {2, [2]int{0, 10}}, {2, [2]int{10, 5}}, {2, [2]int{65000, 70000}}} {
		if _, _, err := a.Reserve(ctx, "p", "w", bad.size, bad.rng); err == nil {
			t.Errorf("Reserve(size %d, range %v): got nil error; want one", bad.size, bad.rng)
		}
	}
	if _, err := New(reg, Options{Range: [2]int{5, 1}}); err == nil {
		t.Errorf("New with range 5-1: got nil error; want one")
	}
	def, err := New(reg, Options{})
	if err != nil || def.rng != DefaultRange() {
		t.Errorf("New with no range: range %v, %v; want %v", def.rng, err, DefaultRange())
	}
}

func TestExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fb := &fakeBind{held: map[string]error{"0.0.0.0:307": syscall.EADDRINUSE}}
	a, _ := newAllocator(t, Options{Range: [2]int{300, 309}, Bind: fb.bind})
	if lo, hi, err := a.Reserve(ctx, "p", "a", 4, [2]int{}); err != nil || lo != 300 || hi != 303 {
		t.Fatalf("first = %d-%d, %v; want 300-303", lo, hi, err)
	}
	// 304-307 holds 307, so only 304-306 and 308-309 are left: no run of 4.
	_, _, err := a.Reserve(ctx, "p", "b", 4, [2]int{})
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("second: err = %v; want ErrExhausted", err)
	}
	for _, want := range []string{"p/b", "no 4 consecutive free ports in 300-309", "1 blocks of other worktrees", "1 ports found held", "[project] port_range"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if lo, hi, err := a.Reserve(ctx, "p", "b", 3, [2]int{}); err != nil || lo != 304 || hi != 306 {
		t.Errorf("third (3 ports) = %d-%d, %v; want 304-306", lo, hi, err)
	}
	if _, _, err := a.Reserve(ctx, "p", "c", 11, [2]int{}); !errors.Is(err, ErrExhausted) {
		t.Errorf("larger than the range: err = %v; want ErrExhausted", err)
	}
}

// TestOwnBlock: a worktree keeps its block across reservations even while
// its own services hold its ports, gets a new one when it needs more ports
// or the range moved, and gives it back with Release.
func TestOwnBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fb := &fakeBind{}
	a, _ := newAllocator(t, Options{Range: [2]int{400, 499}, Bind: fb.bind})
	b, created, err := a.ReserveBlock(ctx, "p", "w", 3, [2]int{})
	if err != nil || !created || b.Lo != 400 {
		t.Fatalf("first = %+v, %v, %v; want new 400-402", b, created, err)
	}
	if _, _, err := a.Reserve(ctx, "p", "x", 2, [2]int{}); err != nil { // 403-404
		t.Fatal(err)
	}
	fb.mu.Lock()
	fb.held = map[string]error{"127.0.0.1:400": syscall.EADDRINUSE, "0.0.0.0:401": syscall.EADDRINUSE}
	fb.mu.Unlock()
	steps := []struct {
		name    string
		size    int
		rng     [2]int
		lo, hi  int
		created bool
	}{
		{"same size, held by its services", 3, [2]int{}, 400, 402, false},
		{"fewer ports", 1, [2]int{}, 400, 402, false},
		{"more ports", 4, [2]int{}, 405, 408, true},
		{"range moved", 2, [2]int{450, 460}, 450, 451, true},
	}
	for _, st := range steps {
		b, created, err := a.ReserveBlock(ctx, "p", "w", st.size, st.rng)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if b.Lo != st.lo || b.Hi != st.hi || created != st.created {
			t.Errorf("%s: %d-%d new=%v; want %d-%d new=%v", st.name, b.Lo, b.Hi, created, st.lo, st.hi, st.created)
		}
	}
	if lo, hi, err := a.Block(ctx, "p", "w"); err != nil || lo != 450 || hi != 451 {
		t.Errorf("Block = %d-%d, %v; want 450-451", lo, hi, err)
	}
	if lo, hi, err := a.Release(ctx, "p", "w"); err != nil || lo != 450 || hi != 451 {
		t.Errorf("Release = %d-%d, %v; want 450-451", lo, hi, err)
	}
	if lo, hi, err := a.Block(ctx, "p", "w"); err != nil || lo != 0 || hi != 0 {
		t.Errorf("Block after Release = %d-%d, %v; want 0-0", lo, hi, err)
	}
	if lo, hi, err := a.Release(ctx, "p", "w"); err != nil || lo != 0 || hi != 0 {
		t.Errorf("second Release = %d-%d, %v; want 0-0, nil", lo, hi, err)
	}
	// The released ports go to the next worktree that fits.
	if lo, _, err := a.Reserve(ctx, "q", "z", 2, [2]int{450, 460}); err != nil || lo != 450 {
		t.Errorf("reserve after release: lo %d, %v; want 450", lo, err)
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), registry.FileName)
	fb := &fakeBind{}
	reg, err := registry.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := New(reg, Options{Range: [2]int{500, 599}, Bind: fb.bind})
	lo1, hi1, err := a.Reserve(ctx, "p", "w", 5, [2]int{})
	if err != nil {
		t.Fatal(err)
	}
	reg.Close()

	reg = openRegistry(t, path)
	a, _ = New(reg, Options{Range: [2]int{500, 599}, Bind: fb.bind})
	b, created, err := a.ReserveBlock(ctx, "p", "w", 5, [2]int{})
	if err != nil || created || b.Lo != lo1 || b.Hi != hi1 {
		t.Errorf("after reopen = %+v, new=%v, %v; want the same %d-%d, not new", b, created, err, lo1, hi1)
	}
	lo2, _, err := a.Reserve(ctx, "p", "other", 5, [2]int{})
	if err != nil || lo2 <= hi1 {
		t.Errorf("another worktree after reopen: lo %d, %v; want past %d", lo2, err, hi1)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	fb := &fakeBind{held: map[string]error{"[::1]:602": syscall.EADDRINUSE, "0.0.0.0:605": syscall.EADDRINUSE}}
	a, _ := newAllocator(t, Options{Bind: fb.bind})
	if got := a.Check(context.Background(), 600, 606); !slices.Equal(got, []int{602, 605}) {
		t.Errorf("Check = %v; want [602 605]", got)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
