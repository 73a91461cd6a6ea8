package warm

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestSetupSumFollowsInputs: the setup sum — what decides whether setup
// runs again — changes when an input's content or the commands change, and
// only then.
func TestSetupSumFollowsInputs(t *testing.T) {
	root := t.TempDir()
	write(t, root, "pnpm-lock.yaml", "lock: 1")
	write(t, root, "src/app.js", "app")
	cmds, inputs := []string{"pnpm install --frozen-lockfile"}, []string{"pnpm-lock.yaml"}
	sum := func(cmds []string) string {
		t.Helper()
		s, _, err := SetupSum(root, cmds, inputs)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := sum(cmds)
	if again := sum(cmds); again != first {
		t.Fatalf("sum changed with nothing changed: %s then %s", first, again)
	}
	write(t, root, "src/app.js", "app v2")
	if got := sum(cmds); got != first {
		t.Errorf("sum changed when a file outside inputs changed")
	}
	if got := sum([]string{"pnpm install"}); got == first {
		t.Errorf("sum unchanged when the commands changed")
	}
	write(t, root, "pnpm-lock.yaml", "lock: 2")
	if got := sum(cmds); got == first {
		t.Errorf("sum unchanged when an input's content changed")
	}
}

// TestStoreRecords: records round-trip, are 0600, and a worktree made
// again under the same name (a new .git file) starts with an empty record.
func TestStoreRecords(t *testing.T) {
	home, wt := t.TempDir(), t.TempDir()
	write(t, wt, ".git", "gitdir: /x/.git/worktrees/feat")
	s := NewStore(home)
	r, err := s.Get("acme", "feat-x-123456", wt)
	if err != nil || !r.Copied.IsZero() || r.SetupSum != "" {
		t.Fatalf("first Get = %+v, %v; want an empty record", r, err)
	}
	r.Copied, r.SetupSum = time.Now().UTC(), "abc"
	if err := s.Put("acme", "feat-x-123456", r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("acme", "feat-x-123456", wt)
	if err != nil || got.SetupSum != "abc" || got.Copied.IsZero() {
		t.Fatalf("Get after Put = %+v, %v; want the record put", got, err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(home, "warm", "acme", "feat-x-123456.json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("record file: %v, %v; want mode 0600", fi, err)
		}
	}
	// The worktree removed and made again: a new .git file.
	os.Remove(filepath.Join(wt, ".git"))
	later := time.Now().Add(time.Second)
	write(t, wt, ".git", "gitdir: /x/.git/worktrees/feat")
	os.Chtimes(filepath.Join(wt, ".git"), later, later)
	if got, _ := s.Get("acme", "feat-x-123456", wt); got.SetupSum != "" || !got.Copied.IsZero() {
		t.Errorf("Get for a re-made worktree = %+v; want an empty record", got)
	}
	if err := s.Delete("acme", "feat-x-123456"); err != nil {
		t.Fatal(err)
	}
}
