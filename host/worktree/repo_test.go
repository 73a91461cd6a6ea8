package worktree_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/worktree"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	linked := filepath.Join(f.tmp, "linked")
	gitT(t, f.root, "worktree", "add", "-q", "-b", "side", linked)
	if err := os.MkdirAll(filepath.Join(f.root, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(linked, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, wantDir string
	}{
		{"main root", f.root, f.root},
		{"main subdir", filepath.Join(f.root, "sub", "deeper"), f.root},
		{"linked root", linked, linked},
		{"linked subdir", filepath.Join(linked, "inner"), linked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := worktree.Open(ctxT(t), tt.dir)
			if err != nil {
				t.Fatalf("Open(%s): %v", tt.dir, err)
			}
			if r.Root != f.root {
				t.Errorf("Root = %s; want %s", r.Root, f.root)
			}
			if r.Dir != tt.wantDir {
				t.Errorf("Dir = %s; want %s", r.Dir, tt.wantDir)
			}
			if want := filepath.Join(f.tmp, "app.worktrees"); r.DefaultDir() != want {
				t.Errorf("DefaultDir() = %s; want %s", r.DefaultDir(), want)
			}
		})
	}
}

func TestOpenNotARepo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := worktree.Open(ctxT(t), dir)
	if err == nil {
		t.Fatalf("Open(%s) = nil error; want not a git repository", dir)
	}
	if msg := err.Error(); !strings.Contains(msg, "not a git repository") || strings.Contains(msg, "\n") {
		t.Errorf("got %q; want one line saying not a git repository", msg)
	}
	if _, err := worktree.Open(ctxT(t), filepath.Join(dir, "missing")); err == nil {
		t.Errorf("Open of a missing directory = nil error; want an error")
	}
}

func TestOpenBare(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	bare := filepath.Join(tmp, "bare.git")
	gitT(t, tmp, "init", "-q", "--bare", "-b", "main", bare)
	r, err := worktree.Open(ctxT(t), bare)
	if err != nil {
		t.Fatalf("Open(bare): %v", err)
	}
	if !r.Bare || r.Root != bare || r.Dir != "" {
		t.Errorf("got Root %s Bare %v Dir %q; want Root %s Bare true Dir \"\"", r.Root, r.Bare, r.Dir, bare)
	}
	if _, err := worktree.Current(ctxT(t), bare); err == nil || !strings.Contains(err.Error(), "bare") {
		t.Errorf("Current(bare) = %v; want an error about a bare repository", err)
	}
}

func TestListAndCurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	side := filepath.Join(f.tmp, "side")
	detached := filepath.Join(f.tmp, "detached")
	gitT(t, f.root, "worktree", "add", "-q", "-b", "feat/side", side)
	gitT(t, f.root, "worktree", "add", "-q", "--detach", detached, "main")
	gitT(t, f.root, "worktree", "lock", detached)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wts, err := r.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []worktree.Worktree{
		{Path: f.root, Branch: "main", Head: f.commits["main"]},
		{Path: detached, Head: f.commits["main"], Detached: true, Locked: true},
		{Path: side, Branch: "feat/side", Head: f.commits["main"]},
	}
	// git lists the main worktree first, then the others by path.
	if len(wts) != len(want) {
		t.Fatalf("List = %+v; want %+v", wts, want)
	}
	for i := range want {
		if wts[i] != want[i] {
			t.Errorf("List[%d] = %+v; want %+v", i, wts[i], want[i])
		}
	}
	if err := os.MkdirAll(filepath.Join(side, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{filepath.Join(side, "pkg"), side},
		{f.root, f.root},
		{detached, detached},
	} {
		got, err := worktree.Current(ctxT(t), tt.dir)
		if err != nil {
			t.Fatalf("Current(%s): %v", tt.dir, err)
		}
		if got.Path != tt.want {
			t.Errorf("Current(%s).Path = %s; want %s", tt.dir, got.Path, tt.want)
		}
	}
	wt, ok, err := r.ForBranch(ctxT(t), "feat/side")
	if err != nil || !ok || wt.Path != side {
		t.Errorf("ForBranch(feat/side) = %+v, %v, %v; want %s", wt, ok, err, side)
	}
	if _, ok, err := r.ForBranch(ctxT(t), "nope"); err != nil || ok {
		t.Errorf("ForBranch(nope) = %v, %v; want false, nil", ok, err)
	}
}
