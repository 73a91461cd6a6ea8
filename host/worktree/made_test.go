package worktree

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestMarkMade(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "repo")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", root},
		{"-C", root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first"},
		{"-C", root, "worktree", "add", "-q", "-b", "other", filepath.Join(root, ".claude", "worktrees", "x")},
	} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	linked := filepath.Join(root, ".claude", "worktrees", "x")
	if made, known := Made(linked); made || !known {
		t.Fatalf("Made(fresh linked) = %v, %v; want false, true", made, known)
	}
	if made, known := Made(root); made || known {
		t.Fatalf("Made(main) = %v, %v; want false, false", made, known)
	}
	if err := MarkMade(root); err == nil {
		t.Fatalf("MarkMade(main worktree) succeeded; want an error")
	}
	if err := MarkMade(linked); err != nil {
		t.Fatal(err)
	}
	if made, known := Made(linked); !made || !known {
		t.Fatalf("Made(marked) = %v, %v; want true, true", made, known)
	}
}
