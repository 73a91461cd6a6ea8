package world

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

// TestStatusMemoConfig: worlds whose binky.toml has the same text share one
// parse; another text is parsed on its own; a file with errors falls back
// to the recorded ConfigPath, as worldConfig does.
func TestStatusMemoConfig(t *testing.T) {
	base := t.TempDir()
	write := func(dir, text string) string {
		if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(base, dir, "binky.toml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := "[project]\nname = \"m\"\n\n[services.b]\ncmd = \"exec sleep 1\"\n\n[services.a]\ncmd = \"exec sleep 1\"\n"
	one := "[project]\nname = \"m\"\n\n[services.a]\ncmd = \"exec sleep 1\"\n"
	write("w1", two)
	write("w2", two)
	write("w3", one)
	write("broken", "[project\n")
	fallback := write("kept", one)

	m := newStatusMemo()
	ctx := context.Background()
	c1 := m.config(ctx, &registry.Worktree{Path: filepath.Join(base, "w1")})
	c2 := m.config(ctx, &registry.Worktree{Path: filepath.Join(base, "w2")})
	c3 := m.config(ctx, &registry.Worktree{Path: filepath.Join(base, "w3")})
	if c1 == nil || c1 != c2 {
		t.Fatalf("same text: got %p and %p; want one shared parse", c1, c2)
	}
	if got := len(c1.Order); got != 2 {
		t.Errorf("w1 has %d services in order; want 2", got)
	}
	if c3 == nil || c3 == c1 || len(c3.Order) != 1 {
		t.Errorf("another text: got %+v; want its own parse with 1 service", c3)
	}
	if c := m.config(ctx, &registry.Worktree{Path: filepath.Join(base, "broken"), ConfigPath: fallback}); c != c3 {
		t.Errorf("broken file with a kept ConfigPath: got %p; want the kept file's parse %p", c, c3)
	}
	if c := m.config(ctx, &registry.Worktree{Path: filepath.Join(base, "broken")}); c != nil {
		t.Errorf("broken file alone: got %+v; want nil", c)
	}
}
