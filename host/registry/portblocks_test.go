package registry

import (
	"context"
	"errors"
	"testing"
)

func TestPortBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	b, created, err := r.ReservePortBlock(ctx, "shop", "a", fixed(20000, 20009))
	if err != nil || !created || b.Lo != 20000 || b.Hi != 20009 || b.Size() != 10 {
		t.Fatalf("first reserve = %+v, %v, %v; want new 20000-20009", b, created, err)
	}
	// The chooser sees the worktree's own block and the others'.
	var sawOwn *PortBlock
	var sawOthers int
	_, created, err = r.ReservePortBlock(ctx, "shop", "a", func(own *PortBlock, others []*PortBlock) (int, int, error) {
		sawOwn, sawOthers = own, len(others)
		return own.Lo, own.Hi, nil
	})
	if err != nil || created || sawOwn == nil || sawOwn.Lo != 20000 || sawOthers != 0 {
		t.Errorf("keep reserve: created %v err %v own %+v others %d; want kept, own 20000, no others", created, err, sawOwn, sawOthers)
	}

	tests := []struct {
		name   string
		lo, hi int
	}{
		{"same range", 20000, 20009},
		{"inside", 20003, 20004},
		{"straddles the start", 19995, 20000},
		{"straddles the end", 20009, 20020},
		{"covers", 19000, 21000},
	}
	for _, tc := range tests {
		_, _, err := r.ReservePortBlock(ctx, "shop", "b", fixed(tc.lo, tc.hi))
		if !errors.Is(err, ErrPortBlockOverlap) {
			t.Errorf("%s (%d-%d): err = %v; want ErrPortBlockOverlap", tc.name, tc.lo, tc.hi, err)
		}
	}
	for _, bad := range [][2]int{{0, 5}, {65530, 65536}, {30010, 30000}} {
		if _, _, err := r.ReservePortBlock(ctx, "shop", "b", fixed(bad[0], bad[1])); err == nil {
			t.Errorf("invalid block %d-%d: got nil error; want one", bad[0], bad[1])
		}
	}
	if _, _, err := r.ReservePortBlock(ctx, "shop", "b", fixed(20010, 20010)); err != nil {
		t.Errorf("adjacent block: %v", err)
	}
	// Moving a worktree's own block onto part of itself is allowed.
	if b, created, err := r.ReservePortBlock(ctx, "shop", "a", fixed(20005, 20009)); err != nil || !created || b.Lo != 20005 {
		t.Errorf("move own block = %+v, %v, %v; want new 20005-20009", b, created, err)
	}
	w, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "a"})
	if err != nil || w.PortLo != 20005 || w.PortHi != 20009 {
		t.Errorf("worktree ports = %d-%d, %v; want 20005-20009", w.PortLo, w.PortHi, err)
	}
	all, err := r.PortBlocks(ctx)
	if err != nil || len(all) != 2 || all[0].Worktree != "a" || all[1].Worktree != "b" {
		t.Errorf("PortBlocks = %v, %v; want a then b", all, err)
	}
	rel, err := r.ReleasePortBlock(ctx, "shop", "a")
	if err != nil || rel == nil || rel.Lo != 20005 {
		t.Errorf("Release = %+v, %v; want 20005-20009", rel, err)
	}
	if rel, err := r.ReleasePortBlock(ctx, "shop", "a"); err != nil || rel != nil {
		t.Errorf("second Release = %+v, %v; want nil, nil", rel, err)
	}
	if _, err := r.PortBlock(ctx, "shop", "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("released block: err = %v; want ErrNotFound", err)
	}
	chooseErr := errors.New("no room")
	if _, _, err := r.ReservePortBlock(ctx, "shop", "c", func(*PortBlock, []*PortBlock) (int, int, error) { return 0, 0, chooseErr }); !errors.Is(err, chooseErr) {
		t.Errorf("chooser error: err = %v; want it passed through", err)
	}
}
