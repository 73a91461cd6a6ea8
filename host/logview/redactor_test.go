package logview

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

// TestRedactorPasswordValues: a value whose key names a password (an
// adapter's connection values) is masked whole, though no address holds
// it; other values are not.
func TestRedactorPasswordValues(t *testing.T) {
	home := t.TempDir()
	ctx := t.Context()
	reg, err := registry.Open(ctx, filepath.Join(home, registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "main", Branch: "main", Path: home, Repo: home, ConfigPath: filepath.Join(home, "binky.toml"), State: "up"})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.UpsertService(ctx, &registry.Service{WorktreeID: wt.ID, Name: "db", Kind: registry.KindAdapter,
		Address: "postgres://app@127.0.0.1:5432/acme_main", Values: map[string]string{"password": "from-a-passfile", "database": "acme_main"}}); err != nil {
		t.Fatal(err)
	}
	reg.Close()
	red, err := Redactor(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	got := red.String("pw from-a-passfile db acme_main")
	if strings.Contains(got, "from-a-passfile") || !strings.Contains(got, "acme_main") {
		t.Errorf("redacted %q; want the password masked and the database kept", got)
	}
}
