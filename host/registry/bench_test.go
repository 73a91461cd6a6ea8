package registry

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

// BenchmarkSetServiceState measures one committed write (a state change, as
// the supervisor makes on every start and exit).
func BenchmarkSetServiceState(b *testing.B) {
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	w, err := r.UpsertWorktree(ctx, &Worktree{Project: "p", Name: "w"})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}); err != nil {
		b.Fatal(err)
	}
	states := []state.Service{state.ServiceRunning, state.ServiceUnhealthy}
	for i := 0; b.Loop(); i++ {
		if err := r.SetServiceState(ctx, w.ID, "web", states[i%2], nil, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorktrees measures listing 50 worktrees (what status reads).
func BenchmarkWorktrees(b *testing.B) {
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for i := range 50 {
		if _, err := r.UpsertWorktree(ctx, &Worktree{Project: "p", Name: "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := r.Worktrees(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
