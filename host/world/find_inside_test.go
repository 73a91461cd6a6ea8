package world

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInside: a directory is in a work tree when nothing between them has
// a .git of its own; a nested repository or worktree, a sibling and a
// directory with no .git at the top are not.
func TestInside(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	for _, d := range []string{"repo/.git", "repo/src/pkg", "repo/vendor/other/.git", "repo/vendor/other/x", "repo/.wt/feat", "sibling", "nogit/a"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, ".wt/feat/.git"), []byte("gitdir: ../../.git/worktrees/feat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, top string
		want     bool
	}{
		{repo, repo, true},
		{filepath.Join(repo, "src/pkg"), repo, true},
		{filepath.Join(repo, "vendor/other/x"), repo, false}, // a nested repository
		{filepath.Join(repo, ".wt/feat"), repo, false},       // a worktree: its own .git
		{filepath.Join(repo, ".wt/feat"), filepath.Join(repo, ".wt/feat"), true},
		{filepath.Join(base, "sibling"), repo, false},
		{base, repo, false},
		{filepath.Join(base, "nogit/a"), filepath.Join(base, "nogit"), false},
		{repo, "", false},
	}
	for _, tt := range tests {
		if got := inside(tt.dir, tt.top); got != tt.want {
			t.Errorf("inside(%q, %q) = %v; want %v", tt.dir, tt.top, got, tt.want)
		}
	}
}
