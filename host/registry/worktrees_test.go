package registry

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/binkyhq/binky/host/state"
)

func TestWorktreeRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	in := &Worktree{Project: "shop", Name: "feat-a-1b2c", Branch: "feat/a", Path: "/src/shop-feat-a", Repo: "/src/shop", ConfigPath: "/src/shop-feat-a/binky.toml"}
	w, err := r.UpsertWorktree(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID == 0 || w.State != state.WorldDown || w.CreatedAt.IsZero() || !w.CreatedAt.Equal(w.UpdatedAt) {
		t.Errorf("new worktree: id %d state %q created %v updated %v; want an id, state down, created = updated", w.ID, w.State, w.CreatedAt, w.UpdatedAt)
	}
	got, err := r.Worktree(ctx, "shop", "feat-a-1b2c")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("Worktree = %+v; want %+v", got, w)
	}
	byID, err := r.WorktreeByID(ctx, w.ID)
	if err != nil || !reflect.DeepEqual(byID, w) {
		t.Errorf("WorktreeByID = %+v, %v; want %+v", byID, err, w)
	}

	// Upsert of the same (project, name) updates in place; empty state keeps it.
	if err := r.SetWorktreeState(ctx, w.ID, state.WorldUp); err != nil {
		t.Fatal(err)
	}
	w2, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat-a-1b2c", Branch: "feat/a", Path: "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if w2.ID != w.ID || w2.Path != "/elsewhere" || w2.State != state.WorldUp || !w2.CreatedAt.Equal(w.CreatedAt) {
		t.Errorf("re-upsert: id %d path %q state %q created %v; want id %d path /elsewhere state up created %v", w2.ID, w2.Path, w2.State, w2.CreatedAt, w.ID, w.CreatedAt)
	}
	w3, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat-a-1b2c", State: state.WorldFailed})
	if err != nil {
		t.Fatal(err)
	}
	if w3.State != state.WorldFailed {
		t.Errorf("upsert with state: state %q; want failed", w3.State)
	}
}

func TestWorktreeErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	if _, err := r.Worktree(ctx, "shop", "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Worktree of an unknown name: err = %v; want ErrNotFound", err)
	}
	if _, err := r.WorktreeByID(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("WorktreeByID(99): err = %v; want ErrNotFound", err)
	}
	if err := r.SetWorktreeState(ctx, 99, state.WorldUp); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetWorktreeState(99): err = %v; want ErrNotFound", err)
	}
	if _, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop"}); err == nil {
		t.Errorf("UpsertWorktree without a name: got nil error; want one")
	}
	if err := r.DeleteWorktree(ctx, 99); err != nil {
		t.Errorf("DeleteWorktree of a missing worktree = %v; want nil", err)
	}
}

func TestFindAndListWorktrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	for _, w := range []*Worktree{
		{Project: "zoo", Name: "main", Branch: "main"},
		{Project: "shop", Name: "feat-login-3f2a", Branch: "feat/login"},
		{Project: "shop", Name: "main", Branch: "main"},
		{Project: "blog", Name: "feat-login-3f2a", Branch: "feat/login"},
	} {
		if _, err := r.UpsertWorktree(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(ws []*Worktree) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Project+"/"+w.Name)
		}
		return out
	}
	all, err := r.Worktrees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(all), []string{"blog/feat-login-3f2a", "shop/feat-login-3f2a", "shop/main", "zoo/main"}; !slices.Equal(got, want) {
		t.Errorf("Worktrees = %v; want %v", got, want)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"feat/login", []string{"blog/feat-login-3f2a", "shop/feat-login-3f2a"}},
		{"feat-login-3f2a", []string{"blog/feat-login-3f2a", "shop/feat-login-3f2a"}},
		{"main", []string{"shop/main", "zoo/main"}},
		{"nope", nil},
	}
	for _, tc := range tests {
		got, err := r.FindWorktree(ctx, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(got), tc.want) {
			t.Errorf("FindWorktree(%q) = %v; want %v", tc.query, keys(got), tc.want)
		}
	}
}

func TestDeleteWorktreeTakesItsState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	keep, _ := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "keep"})
	gone, _ := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "gone"})
	for _, w := range []*Worktree{keep, gone} {
		if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}); err != nil {
			t.Fatal(err)
		}
		if err := r.AddVerifyRun(ctx, &VerifyRun{WorktreeID: w.ID, Passed: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.ReservePortBlock(ctx, "shop", "keep", fixed(21000, 21009)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReservePortBlock(ctx, "shop", "gone", fixed(21010, 21019)); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteWorktree(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Worktree(ctx, "shop", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted worktree: err = %v; want ErrNotFound", err)
	}
	if ss, _ := r.Services(ctx, gone.ID); len(ss) != 0 {
		t.Errorf("deleted worktree has %d services; want 0", len(ss))
	}
	if _, err := r.LastVerifyRun(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted worktree's verify run: err = %v; want ErrNotFound", err)
	}
	if _, err := r.PortBlock(ctx, "shop", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted worktree's port block: err = %v; want ErrNotFound", err)
	}
	// The other worktree keeps everything.
	if ss, _ := r.Services(ctx, keep.ID); len(ss) != 1 {
		t.Errorf("kept worktree has %d services; want 1", len(ss))
	}
	if b, err := r.PortBlock(ctx, "shop", "keep"); err != nil || b.Lo != 21000 {
		t.Errorf("kept worktree's block = %+v, %v; want 21000-21009", b, err)
	}
	// Its ports are free for another worktree now.
	if _, _, err := r.ReservePortBlock(ctx, "blog", "x", fixed(21010, 21019)); err != nil {
		t.Errorf("reserving the deleted worktree's ports: %v", err)
	}
}

func TestWorktreeSecretsAndServiceSpec(t *testing.T) {
	ctx := context.Background()
	r, _ := newRegistry(t)
	w, err := r.UpsertWorktree(ctx, &Worktree{Project: "p", Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetWorktreeSecrets(ctx, w.ID, []string{"s3cret", "hunter22"}); err != nil {
		t.Fatal(err)
	}
	got, err := r.WorktreeByID(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Secrets, []string{"s3cret", "hunter22"}) {
		t.Errorf("secrets = %v; want [s3cret hunter22]", got.Secrets)
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "api", Kind: KindCmd}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetServiceSpec(ctx, w.ID, "api", `{"Command":"x"}`); err != nil {
		t.Fatal(err)
	}
	s, err := r.Service(ctx, w.ID, "api")
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec != `{"Command":"x"}` {
		t.Errorf("spec = %q", s.Spec)
	}
}
