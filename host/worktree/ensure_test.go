package worktree_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

func TestEnsureSources(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gitT(t, f.root, "checkout", "-q", "-b", "feat/local")
	localCommit := commit(t, f.root, "local.txt", "local\n")
	gitT(t, f.root, "checkout", "-q", "main")
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		branch, wantHead, wantUpstream string
	}{
		{"feat/local", localCommit, ""},
		{"remote-only", f.commits["origin/remote-only"], "origin/remote-only"},
		{"dual", f.commits["origin/dual"], "origin/dual"},
		{"only-up1", f.commits["up1/only-up1"], "up1/only-up1"},
		{"brand/New_thing", f.commits["main"], ""},
	}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			wt, created, err := r.Ensure(ctxT(t), tt.branch, "")
			if err != nil {
				t.Fatalf("Ensure(%q): %v", tt.branch, err)
			}
			wantPath := filepath.Join(f.tmp, "app.worktrees", names.Worktree(tt.branch))
			if !created || wt.Path != wantPath || wt.Branch != tt.branch || wt.Head != tt.wantHead {
				t.Errorf("Ensure(%q) = %+v, created %v; want path %s, branch %s, head %s, created true",
					tt.branch, wt, created, wantPath, tt.branch, tt.wantHead)
			}
			if got := gitT(t, wt.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != tt.branch {
				t.Errorf("checked out %q; want %q", got, tt.branch)
			}
			upstream := ""
			if tt.wantUpstream != "" {
				upstream = gitT(t, wt.Path, "rev-parse", "--abbrev-ref", "@{upstream}")
			}
			if upstream != tt.wantUpstream {
				t.Errorf("upstream = %q; want %q", upstream, tt.wantUpstream)
			}
			again, created, err := r.Ensure(ctxT(t), tt.branch, "")
			if err != nil || created || again != wt {
				t.Errorf("second Ensure(%q) = %+v, %v, %v; want %+v, false, nil", tt.branch, again, created, err, wt)
			}
		})
	}
}

func TestEnsureAmbiguousRemote(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Ensure(ctxT(t), "shared", "")
	if err == nil {
		t.Fatal("Ensure(shared) = nil error; want an error naming up1 and up2")
	}
	if msg := err.Error(); !strings.Contains(msg, "up1, up2") || strings.Contains(msg, "\n") {
		t.Errorf("got %q; want one line naming up1, up2", msg)
	}
	if _, err := os.Stat(filepath.Join(f.tmp, "app.worktrees", "shared")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree directory left behind: %v", err)
	}
}

func TestEnsureReusesOwnWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mine := filepath.Join(f.tmp, "elsewhere", "my-checkout")
	gitT(t, f.root, "worktree", "add", "-q", "-b", "feat/mine", mine)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wt, created, err := r.Ensure(ctxT(t), "feat/mine", "")
	if err != nil || created || wt.Path != mine {
		t.Errorf("Ensure(feat/mine) = %+v, %v, %v; want %s, false, nil", wt, created, err, mine)
	}
	// The main worktree's own branch is reused too.
	wt, created, err = r.Ensure(ctxT(t), "main", "")
	if err != nil || created || wt.Path != f.root {
		t.Errorf("Ensure(main) = %+v, %v, %v; want %s, false, nil", wt, created, err, f.root)
	}
}

func TestEnsureNewBranchStartsAtOpenedWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	side := filepath.Join(f.tmp, "side")
	gitT(t, f.root, "worktree", "add", "-q", "-b", "side", side)
	sideHead := commit(t, side, "side.txt", "side\n")
	r, err := worktree.Open(ctxT(t), side)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.tmp, "custom")
	wt, created, err := r.Ensure(ctxT(t), "from-side", dir)
	if err != nil || !created {
		t.Fatalf("Ensure(from-side) = %+v, %v, %v", wt, created, err)
	}
	if wt.Head != sideHead || wt.Path != filepath.Join(dir, "from-side") {
		t.Errorf("got head %s at %s; want head %s at %s", wt.Head, wt.Path, sideHead, filepath.Join(dir, "from-side"))
	}
}

func TestEnsureInvalidBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"", "a..b", "-x", "--upload-pack=x", "a b", "feat/", "x.lock", "HEAD", "@{-1}", "a\nb", "a~1", "a^", "a:b", "/a", "a\x00b"} {
		_, _, err := r.Ensure(ctxT(t), b, "")
		if !errors.Is(err, worktree.ErrInvalidBranch) {
			t.Errorf("Ensure(%q) = %v; want ErrInvalidBranch", b, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%q", b)) || strings.Contains(msg, "\n") {
			t.Errorf("Ensure(%q) error %q; want one line naming the branch", b, msg)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(f.tmp, "app.worktrees"))
	if len(entries) != 0 {
		t.Errorf("invalid branches left %d directories behind", len(entries))
	}
}

func TestEnsureRecreatesMissingDirectory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wt, _, err := r.Ensure(ctxT(t), "feat/gone", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(wt.Path); err != nil {
		t.Fatal(err)
	}
	again, created, err := r.Ensure(ctxT(t), "feat/gone", "")
	if err != nil || !created || again.Path != wt.Path || again.Prunable {
		t.Errorf("Ensure after the directory was deleted = %+v, %v, %v; want it recreated at %s", again, created, err, wt.Path)
	}
	if _, err := os.Stat(filepath.Join(again.Path, "a.txt")); err != nil {
		t.Errorf("recreated worktree is not checked out: %v", err)
	}
}

func TestEnsurePathTaken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(r.DefaultDir(), "taken")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taken, "junk"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Ensure(ctxT(t), "taken", "")
	if err == nil {
		t.Fatal("Ensure into an occupied directory = nil error; want one")
	}
	if msg := err.Error(); !strings.Contains(msg, taken) || !strings.Contains(msg, "already exists") || strings.Contains(msg, "\n") {
		t.Errorf("got %q; want one line naming %s and git's reason", msg, taken)
	}
}

func TestEnsureConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	branches := []string{"remote-only", "dual", "only-up1"}
	for i := range 12 {
		branches = append(branches, fmt.Sprintf("agent/%d", i))
	}
	for range 4 {
		branches = append(branches, "same")
	}
	var wg sync.WaitGroup
	errs := make([]error, len(branches))
	paths := make([]string, len(branches))
	created := make([]bool, len(branches))
	for i, b := range branches {
		wg.Go(func() {
			// Each caller opens its own Repo, as separate processes would.
			r, err := worktree.Open(ctxT(t), f.root)
			if err != nil {
				errs[i] = err
				return
			}
			wt, c, err := r.Ensure(ctxT(t), b, "")
			errs[i], paths[i], created[i] = err, wt.Path, c
		})
	}
	wg.Wait()
	seen := map[string]string{}
	sameCreated := 0
	for i, b := range branches {
		if errs[i] != nil {
			t.Errorf("Ensure(%q): %v", b, errs[i])
			continue
		}
		if b == "same" {
			if created[i] {
				sameCreated++
			}
			if paths[i] != filepath.Join(f.tmp, "app.worktrees", "same") {
				t.Errorf("Ensure(same) = %s; want app.worktrees/same", paths[i])
			}
			continue
		}
		if other, ok := seen[paths[i]]; ok {
			t.Errorf("%q and %q share %s", b, other, paths[i])
		}
		seen[paths[i]] = b
	}
	if sameCreated != 1 {
		t.Errorf("4 concurrent Ensure(same) created it %d times; want 1", sameCreated)
	}
	r, err := worktree.Open(ctxT(t), f.root)
	if err != nil {
		t.Fatal(err)
	}
	wts, err := r.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(wts), len(branches)-3+1; got != want {
		t.Errorf("List has %d worktrees; want %d", got, want)
	}
}
