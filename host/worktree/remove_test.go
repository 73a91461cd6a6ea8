package worktree_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/worktree"
)

func TestDirtyAndHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wt, _, err := r.Ensure(ctxT(t), "feat/dirty", "")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := r.Dirty(ctxT(t), wt.Path)
	if err != nil || len(changes) != 0 {
		t.Fatalf("Dirty(clean) = %q, %v; want none", changes, err)
	}
	head, dirty, err := r.Head(ctxT(t), wt.Path)
	if err != nil || dirty || head != f.commits["main"] {
		t.Errorf("Head(clean) = %s, %v, %v; want %s, false, nil", head, dirty, err, f.commits["main"])
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "changed\n")
	write("new file.txt", "new\n")
	write("ünïcode.txt", "u\n")
	write("staged.txt", "s\n")
	gitT(t, wt.Path, "add", "staged.txt")
	write(".gitignore", "*.log\n")
	write("ignored.log", "noise\n")
	changes, err = r.Dirty(ctxT(t), wt.Path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{" M a.txt", "?? .gitignore", "?? \"new file.txt\"", "?? ünïcode.txt", "A  staged.txt"}
	slices.Sort(changes)
	slices.Sort(want)
	if !slices.Equal(changes, want) {
		t.Errorf("Dirty = %q; want %q", changes, want)
	}
	head, dirty, err = r.Head(ctxT(t), wt.Path)
	if err != nil || !dirty || head != f.commits["main"] {
		t.Errorf("Head(dirty) = %s, %v, %v; want %s, true, nil", head, dirty, err, f.commits["main"])
	}
	if _, err := r.Dirty(ctxT(t), filepath.Join(wt.Path, "sub")); !errors.Is(err, worktree.ErrNotWorktree) {
		t.Errorf("Dirty(not a worktree) = %v; want ErrNotWorktree", err)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	ensure := func(b string) worktree.Worktree {
		wt, _, err := r.Ensure(ctxT(t), b, "")
		if err != nil {
			t.Fatal(err)
		}
		return wt
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	clean := ensure("clean")
	if err := r.Remove(ctxT(t), clean.Path, false); err != nil {
		t.Errorf("Remove(clean): %v", err)
	}
	if exists(clean.Path) {
		t.Errorf("Remove(clean) left %s", clean.Path)
	}
	if err := r.Remove(ctxT(t), clean.Path, false); err != nil {
		t.Errorf("Remove of a removed worktree = %v; want nil", err)
	}
	if got := gitT(t, f.root, "branch", "--list", "clean"); got == "" {
		t.Errorf("Remove deleted the branch; want it kept")
	}

	dirty := ensure("feat/dirty")
	if err := os.WriteFile(filepath.Join(dirty.Path, "a.txt"), []byte("edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirty.Path, "untracked.txt"), []byte("u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = r.Remove(ctxT(t), dirty.Path, false)
	var de *worktree.DirtyError
	if !errors.As(err, &de) {
		t.Fatalf("Remove(dirty) = %v; want a *DirtyError", err)
	}
	if want := []string{" M a.txt", "?? untracked.txt"}; !slices.Equal(de.Changes, want) {
		t.Errorf("DirtyError.Changes = %q; want %q", de.Changes, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "untracked.txt") || !strings.Contains(msg, "--force") || strings.Contains(msg, "\n") {
		t.Errorf("got %q; want one line listing the changes and --force", msg)
	}
	if !exists(filepath.Join(dirty.Path, "untracked.txt")) {
		t.Fatalf("refused Remove touched the worktree")
	}
	if err := r.Remove(ctxT(t), dirty.Path, true); err != nil {
		t.Errorf("Remove(dirty, force): %v", err)
	}
	if exists(dirty.Path) {
		t.Errorf("Remove(dirty, force) left %s", dirty.Path)
	}

	locked := ensure("locked")
	gitT(t, f.root, "worktree", "lock", "--reason", "testing", locked.Path)
	if err := r.Remove(ctxT(t), locked.Path, false); err == nil || !strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Remove(locked) = %v; want a one-line error saying it is locked", err)
	}
	if err := r.Remove(ctxT(t), locked.Path, true); err != nil {
		t.Errorf("Remove(locked, force): %v", err)
	}

	gone := ensure("gone")
	if err := os.RemoveAll(gone.Path); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctxT(t), gone.Path, false); err != nil {
		t.Errorf("Remove(deleted directory): %v", err)
	}
	if _, ok, _ := r.ForBranch(ctxT(t), "gone"); ok {
		t.Errorf("the deleted worktree is still registered")
	}

	if err := r.Remove(ctxT(t), f.root, true); err == nil || !strings.Contains(err.Error(), "main worktree") {
		t.Errorf("Remove(main) = %v; want a refusal", err)
	}
	plain := filepath.Join(f.tmp, "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctxT(t), plain, true); !errors.Is(err, worktree.ErrNotWorktree) {
		t.Errorf("Remove(plain directory) = %v; want ErrNotWorktree", err)
	}
	if !exists(plain) {
		t.Errorf("Remove(plain directory) deleted it")
	}
	wts, err := r.List(ctxT(t))
	if err != nil || len(wts) != 1 {
		t.Errorf("List after removing all = %+v, %v; want the main worktree only", wts, err)
	}
}
