package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/worktree"
)

func TestMainRootAndIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wt, _, err := r.Ensure(ctxT(t), "feat/x", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := worktree.MainRoot(f.root); got != f.root {
		t.Errorf("MainRoot(main) = %q; want %q", got, f.root)
	}
	if got := worktree.MainRoot(wt.Path); got != f.root {
		t.Errorf("MainRoot(linked) = %q; want %q", got, f.root)
	}
	if got := worktree.MainRoot(t.TempDir()); got != "" {
		t.Errorf("MainRoot(not a worktree) = %q; want empty", got)
	}
	if err := os.WriteFile(filepath.Join(f.root, ".gitignore"), []byte(".env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !worktree.Ignored(ctxT(t), f.root, ".env") {
		t.Error("Ignored(.env) = false; want true")
	}
	if worktree.Ignored(ctxT(t), f.root, "README") {
		t.Error("Ignored(README) = true; want false")
	}
}
