package registry

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

// hammer does n rounds of writes that read first, against the shared
// worktree "shared": a worktree of its own upserted, a service state set,
// and the shared service's restart count incremented.
func hammer(ctx context.Context, r *Registry, who string, n int) error {
	shared, err := r.Worktree(ctx, "shop", "shared")
	if err != nil {
		return err
	}
	for i := range n {
		w, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: fmt.Sprintf("%s-%d", who, i%5), Branch: who})
		if err != nil {
			return err
		}
		if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}); err != nil {
			return err
		}
		if err := r.SetServiceProcess(ctx, w.ID, "web", i+1, i+1, uint64(i), state.ServiceRunning); err != nil {
			return err
		}
		if _, err := r.IncRestarts(ctx, shared.ID, "web"); err != nil {
			return err
		}
		if _, err := r.Worktrees(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TestConcurrentWriters runs writers in goroutines and in two other
// processes at once against one file. None may fail (SQLITE_BUSY or
// otherwise) and no increment may be lost.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, path := newRegistry(t)
	shared := newWorktree(t, r, "shared")
	if err := r.UpsertService(ctx, &Service{WorktreeID: shared.ID, Name: "web", Kind: KindCmd}); err != nil {
		t.Fatal(err)
	}
	const rounds, goroutines, procs = 60, 6, 2
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
		cmd.Env = append(os.Environ(), "BINKY_REGISTRY_HELPER="+path, "BINKY_REGISTRY_HELPER_ID=proc"+strconv.Itoa(i), "BINKY_REGISTRY_HELPER_N="+strconv.Itoa(rounds))
		cmd.Stderr = os.Stderr
		cmd.Stdout = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			if err := hammer(ctx, r, fmt.Sprintf("g%d", g), rounds); err != nil {
				t.Errorf("writer g%d: %v", g, err)
			}
		})
	}
	wg.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer process %d: %v", i, err)
		}
	}
	s, err := r.Service(ctx, shared.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if want := rounds * (goroutines + procs); s.Restarts != want {
		t.Errorf("restarts = %d; want %d (an increment was lost)", s.Restarts, want)
	}
	ws, err := r.Worktrees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 5*(goroutines+procs); len(ws) != want {
		t.Errorf("worktrees = %d; want %d", len(ws), want)
	}
}

// TestHelperWriter is the other process of TestConcurrentWriters.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("BINKY_REGISTRY_HELPER")
	if path == "" {
		t.Skip("helper process for TestConcurrentWriters")
	}
	n, _ := strconv.Atoi(os.Getenv("BINKY_REGISTRY_HELPER_N"))
	ctx := context.Background()
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n == 0 {
		return // TestConcurrentOpenFresh: opening (and migrating) is the test
	}
	if err := hammer(ctx, r, os.Getenv("BINKY_REGISTRY_HELPER_ID"), n); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentOpenFresh opens one new file from goroutines and processes
// at once: exactly one migrates it, and every opener succeeds.
func TestConcurrentOpenFresh(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
		cmd.Env = append(os.Environ(), "BINKY_REGISTRY_HELPER="+path, "BINKY_REGISTRY_HELPER_ID=open"+strconv.Itoa(i), "BINKY_REGISTRY_HELPER_N=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r, err := Open(context.Background(), path)
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			r.Close()
		})
	}
	wg.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("opener process %d: %v", i, err)
		}
	}
	if v := rawPragma(t, path, "user_version"); v != strconv.Itoa(int(SchemaVersion)) {
		t.Errorf("user_version = %s; want %d", v, SchemaVersion)
	}
}
