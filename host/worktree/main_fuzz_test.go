package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/worktree"
)

// FuzzMainRoot: whatever a worktree's .git file holds, MainRoot returns ""
// or a clean absolute directory, and never panics. Seeds are in
// testdata/fuzz/FuzzMainRoot.
func FuzzMainRoot(f *testing.F) {
	f.Fuzz(func(t *testing.T, dotgit, commondir string) {
		dir := t.TempDir()
		gd := filepath.Join(dir, "common", ".git", "worktrees", "x")
		if err := os.MkdirAll(gd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gd, "commondir"), []byte(commondir), 0o644); err != nil {
			t.Fatal(err)
		}
		wt := filepath.Join(dir, "wt")
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, ".git"), []byte(dotgit), 0o644); err != nil {
			t.Fatal(err)
		}
		got := worktree.MainRoot(wt)
		if got != "" && (!filepath.IsAbs(got) || filepath.Clean(got) != got) {
			t.Fatalf("MainRoot with .git %q, commondir %q = %q; want empty or a clean absolute path", dotgit, commondir, got)
		}
	})
}
