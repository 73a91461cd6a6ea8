package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

// TestEveryStateOfTheVocabularyIsStored: each world state the registry
// records and each service state is written and read back as the same
// string, through every call that writes one.
func TestEveryStateOfTheVocabularyIsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	for _, st := range state.Worlds() {
		if !st.Recorded() {
			continue
		}
		w, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "w-" + string(st), State: st})
		if err != nil {
			t.Fatalf("upsert a worktree in state %q: %v", st, err)
		}
		if w.State != st {
			t.Errorf("upserted in state %q; read back %q", st, w.State)
		}
		if err := r.SetWorktreeState(ctx, w.ID, state.WorldDown); err != nil {
			t.Fatal(err)
		}
		if err := r.SetWorktreeStateReason(ctx, w.ID, st, "why"); err != nil {
			t.Fatalf("set state %q: %v", st, err)
		}
		if got, err := r.WorktreeByID(ctx, w.ID); err != nil || got.State != st {
			t.Errorf("set state %q; read back %v, %v", st, got, err)
		}
	}
	w := newWorktree(t, r, "main")
	for _, st := range state.Services() {
		name := "s-" + string(st)
		if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: name, Kind: KindCmd, State: st}); err != nil {
			t.Fatalf("upsert a service in state %q: %v", st, err)
		}
		for _, set := range []func() error{
			func() error { return r.SetServiceState(ctx, w.ID, name, st, nil, "") },
			func() error { return r.SetServiceProcess(ctx, w.ID, name, 0, 0, 0, st) },
		} {
			if err := set(); err != nil {
				t.Fatalf("set service state %q: %v", st, err)
			}
			if got, err := r.Service(ctx, w.ID, name); err != nil || got.State != st {
				t.Errorf("set service state %q; read back %v, %v", st, got, err)
			}
		}
	}
}

// TestStatesOutsideTheVocabularyAreRefused: a state that is not one of
// host/state's (a typo, the "healthy" nobody reports) or a world state
// only ever reported (queued, absent) is refused with ErrUnknownState by
// every call that writes a state, and nothing is written.
func TestStatesOutsideTheVocabularyAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if err := r.SetWorktreeState(ctx, w.ID, state.WorldUp); err != nil {
		t.Fatal(err)
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd, State: state.ServiceRunning}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []state.World{"healthy", "running", "Up", state.WorldQueued, state.WorldAbsent} {
		for name, write := range map[string]func() error{
			"UpsertWorktree": func() error {
				_, err := r.UpsertWorktree(ctx, &Worktree{Project: w.Project, Name: w.Name, State: st})
				return err
			},
			"SetWorktreeState":       func() error { return r.SetWorktreeState(ctx, w.ID, st) },
			"SetWorktreeStateReason": func() error { return r.SetWorktreeStateReason(ctx, w.ID, st, "why") },
		} {
			if err := write(); !errors.Is(err, ErrUnknownState) {
				t.Errorf("%s(%q): err = %v; want ErrUnknownState", name, st, err)
			}
		}
	}
	if got, err := r.WorktreeByID(ctx, w.ID); err != nil || got.State != state.WorldUp {
		t.Errorf("after refused writes: %v, %v; want the world still up", got, err)
	}
	for _, st := range []state.Service{"healthy", "restarting", "up", "Running"} {
		for name, write := range map[string]func() error{
			"UpsertService": func() error {
				return r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd, State: st})
			},
			"SetServiceState":   func() error { return r.SetServiceState(ctx, w.ID, "web", st, nil, "") },
			"SetServiceProcess": func() error { return r.SetServiceProcess(ctx, w.ID, "web", 1, 1, 1, st) },
		} {
			if err := write(); !errors.Is(err, ErrUnknownState) {
				t.Errorf("%s(%q): err = %v; want ErrUnknownState", name, st, err)
			}
		}
	}
	if got, err := r.Service(ctx, w.ID, "web"); err != nil || got.State != state.ServiceRunning || got.PID != 0 {
		t.Errorf("after refused writes: %+v, %v; want web still running, no pid", got, err)
	}
}
