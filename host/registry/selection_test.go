package registry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitemigration"

	"github.com/binkyhq/binky/host/state"
)

// TestWorktreeSelection: a world's selection is recorded, read back by
// every lookup, kept by an upsert (up records the world before it knows
// the selection) and cleared with "".
func TestWorktreeSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	wt, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat", Branch: "feat"})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Selection != "" {
		t.Errorf("a new world's selection = %q; want none", wt.Selection)
	}
	sel := `{"profile":"frontend"}`
	if err := r.SetWorktreeSelection(ctx, wt.ID, sel); err != nil {
		t.Fatal(err)
	}
	again, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat", Branch: "feat", State: state.WorldStarting})
	if err != nil {
		t.Fatal(err)
	}
	if again.Selection != sel {
		t.Errorf("selection after an upsert = %q; want %q kept", again.Selection, sel)
	}
	found, err := r.FindWorktree(ctx, "feat")
	if err != nil || len(found) != 1 || found[0].Selection != sel {
		t.Errorf("FindWorktree = %+v, %v; want the selection %q", found, err, sel)
	}
	if err := r.SetWorktreeSelection(ctx, wt.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.WorktreeByID(ctx, wt.ID); got == nil || got.Selection != "" {
		t.Errorf("selection after clearing = %+v; want none", got)
	}
	if err := r.SetWorktreeSelection(ctx, wt.ID+100, sel); !IsNotFound(err) {
		t.Errorf("selection of a world that is not there: %v; want ErrNotFound", err)
	}
}

// TestMigrateFromVersion8: a registry at schema 8 with a world in it
// opens at this binary's schema with the world kept and no selection;
// read-only it is refused until migrated.
func TestMigrateFromVersion8(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	conn, err := sqlite.OpenConn(path, openFlags)
	if err != nil {
		t.Fatal(err)
	}
	old := sqlitemigration.Schema{AppID: AppID, Migrations: migrations()[:8]}
	if err := sqlitemigration.Migrate(ctx, conn, old); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, `
INSERT INTO worktrees (id, project, name, branch, state, reason, created_at, updated_at) VALUES (1, 'shop', 'main', 'main', 'degraded', 'db slow', 1, 2);
INSERT INTO services (worktree_id, name, kind, state, ports, vals, updated_at, stopped) VALUES (1, 'web', 'cmd', 'stopped', '{}', '{}', 5, 1);
`)
	if v := rawPragma(t, path, "user_version"); v != "8" {
		t.Fatalf("user_version = %s; want 8 for this test to mean anything", v)
	}
	if _, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "its schema version is 8") {
		t.Errorf("OpenReadOnly of schema 8: %v; want it refused, naming version 8", err)
	}
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of schema 8: %v", err)
	}
	defer r.Close()
	if v := rawPragma(t, path, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version after Open = %s; want %d", v, SchemaVersion)
	}
	wt, err := r.Worktree(ctx, "shop", "main")
	if err != nil || wt.ID != 1 || wt.State != state.WorldDegraded || wt.Reason != "db slow" || wt.Selection != "" {
		t.Fatalf("worktree after migration = %+v, %v; want #1 degraded (db slow) with no selection", wt, err)
	}
	if web, err := r.Service(ctx, 1, "web"); err != nil || !web.Stopped {
		t.Errorf("service after migration = %+v, %v; want web kept, stopped", web, err)
	}
	if err := r.SetWorktreeSelection(ctx, 1, `{"only":["web"]}`); err != nil {
		t.Fatal(err)
	}
	if wt, _ := r.Worktree(ctx, "shop", "main"); wt == nil || wt.Selection != `{"only":["web"]}` {
		t.Errorf("selection written on the migrated row = %+v", wt)
	}
}
