package ports

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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

// holdPort starts a child process that listens on host at the first port of
// from..to it can bind, and returns that port; the child exits when the test
// ends.
func holdPort(t *testing.T, host string, from, to int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperListener$")
	cmd.Env = append(os.Environ(), "BINKY_PORTS_LISTEN="+host, "BINKY_PORTS_FROM="+itoa(from), "BINKY_PORTS_TO="+itoa(to))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("listener child on %s: %v", host, err)
	}
	var port int
	if _, err := fmt.Sscanf(line, "listening %d", &port); err != nil {
		t.Fatalf("listener child on %s said %q", host, line)
	}
	return port
}

// TestHelperListener is the child of holdPort.
func TestHelperListener(t *testing.T) {
	host := os.Getenv("BINKY_PORTS_LISTEN")
	if host == "" {
		t.Skip("helper process for holdPort")
	}
	from, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_FROM"))
	to, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_TO"))
	for p := from; p <= to; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, itoa(p)))
		if err != nil {
			continue
		}
		fmt.Printf("listening %d\n", p)
		io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
		l.Close()
		return
	}
	fmt.Printf("none free in %d-%d\n", from, to)
}

func hasIPv6Loopback() bool {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// TestHeldByAnotherProcess holds a port in another process on each of the
// three probe addresses in turn; the allocator must skip it.
func TestHeldByAnotherProcess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		from int
	}{
		{"127.0.0.1", 23000},
		{"::1", 23100},
		{"0.0.0.0", 23200},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			t.Parallel()
			if tc.host == "::1" && !hasIPv6Loopback() {
				if os.Getenv("CI") == "true" {
					t.Fatal("this host has no IPv6 loopback (::1); CI needs one to test the ::1 probe")
				}
				t.Skip("this host has no IPv6 loopback (::1): enable IPv6 on lo to run this case")
			}
			held := holdPort(t, tc.host, tc.from, tc.from+60)
			a, _ := newAllocator(t, Options{})
			rng := [2]int{held, held + 30}
			lo, hi, err := a.Reserve(context.Background(), "p", "w", 3, rng)
			if err != nil {
				t.Fatal(err)
			}
			if lo <= held || hi > rng[1] || hi-lo != 2 {
				t.Errorf("block %d-%d with %d held on %s; want 3 ports after %d within %d", lo, hi, held, tc.host, held, rng[1])
			}
			if got := a.Check(context.Background(), held, held); !slices.Equal(got, []int{held}) {
				t.Errorf("Check(%d) = %v; want [%d]", held, got, held)
			}
			if got := a.Check(context.Background(), lo, hi); len(got) != 0 {
				t.Errorf("Check of the reserved block = %v; want none held", got)
			}
		})
	}
}

// TestConcurrentReserves: twenty reservations at once — ten goroutines
// here and five in each of two other processes — never overlap.
func TestConcurrentReserves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), registry.FileName)
	reg := openRegistry(t, path)
	rng := [2]int{24000, 24999}
	const size = 4
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperReserver$")
		cmd.Env = append(os.Environ(), "BINKY_PORTS_DB="+path, "BINKY_PORTS_ID=proc"+itoa(i),
			"BINKY_PORTS_N=5", "BINKY_PORTS_SIZE="+itoa(size), "BINKY_PORTS_RANGE="+fmt.Sprintf("%d-%d", rng[0], rng[1]))
		var out strings.Builder
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, &out)
	}
	a, err := New(reg, Options{Range: rng})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][2]int{}
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Go(func() {
			wt := "g" + itoa(g)
			lo, hi, err := a.Reserve(ctx, "p", wt, size, [2]int{})
			if err != nil {
				t.Errorf("Reserve %s: %v", wt, err)
				return
			}
			mu.Lock()
			got["p/"+wt] = [2]int{lo, hi}
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("reserver process %d: %v", i, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
			if !strings.HasPrefix(line, "p/") {
				continue // the test binary's own PASS line
			}
			var key string
			var lo, hi int
			if _, err := fmt.Sscanf(line, "%s %d %d", &key, &lo, &hi); err != nil {
				t.Fatalf("reserver process %d said %q", i, line)
			}
			got[key] = [2]int{lo, hi}
		}
	}
	if len(got) != 20 {
		t.Fatalf("got %d reservations; want 20", len(got))
	}
	var blocks [][2]int
	for _, b := range got {
		if b[1]-b[0]+1 != size || b[0] < rng[0] || b[1] > rng[1] {
			t.Errorf("block %v; want %d ports inside %v", b, size, rng)
		}
		blocks = append(blocks, b)
	}
	slices.SortFunc(blocks, func(x, y [2]int) int { return x[0] - y[0] })
	for i := 1; i < len(blocks); i++ {
		if blocks[i][0] <= blocks[i-1][1] {
			t.Errorf("blocks %v and %v overlap", blocks[i-1], blocks[i])
		}
	}
	recorded, err := reg.PortBlocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 20 {
		t.Errorf("registry holds %d blocks; want 20", len(recorded))
	}
	for _, b := range recorded {
		if g := got[b.Project+"/"+b.Worktree]; g != [2]int{b.Lo, b.Hi} {
			t.Errorf("registry has %s/%s at %d-%d; the caller got %v", b.Project, b.Worktree, b.Lo, b.Hi, g)
		}
	}
}

// TestHelperReserver is the other process of TestConcurrentReserves.
func TestHelperReserver(t *testing.T) {
	path := os.Getenv("BINKY_PORTS_DB")
	if path == "" {
		t.Skip("helper process for TestConcurrentReserves")
	}
	id := os.Getenv("BINKY_PORTS_ID")
	n, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_N"))
	size, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_SIZE"))
	var rng [2]int
	fmt.Sscanf(os.Getenv("BINKY_PORTS_RANGE"), "%d-%d", &rng[0], &rng[1])
	ctx := context.Background()
	reg, err := registry.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	a, err := New(reg, Options{Range: rng})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for g := range n {
		wg.Go(func() {
			wt := fmt.Sprintf("%s-%d", id, g)
			lo, hi, err := a.Reserve(ctx, "p", wt, size, [2]int{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			fmt.Printf("p/%s %d %d\n", wt, lo, hi)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
