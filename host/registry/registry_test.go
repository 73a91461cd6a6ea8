package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func newRegistry(t *testing.T) (*Registry, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	r, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, path
}

// rawPragma reads a pragma through a plain connection, bypassing Open.
func rawPragma(t *testing.T, path, pragma string) string {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v string
	err = sqlitex.ExecuteTransient(conn, "PRAGMA "+pragma+";", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error { v = stmt.ColumnText(0); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func rawExec(t *testing.T, path, query string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := sqlitex.ExecuteScript(conn, query, nil); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaVersionMatchesMigrations(t *testing.T) {
	t.Parallel()
	if got := len(migrations()); int32(got) != SchemaVersion {
		t.Errorf("len(migrations()) = %d; want SchemaVersion = %d", got, SchemaVersion)
	}
}

func TestOpenMigratesEmpty(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "home", "nested")
	path := filepath.Join(dir, FileName)
	r, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Leave the database open while reading its pragmas from outside.
	defer r.Close()
	checks := []struct{ pragma, want string }{
		{"user_version", fmt.Sprint(SchemaVersion)},
		{"application_id", fmt.Sprint(AppID)},
		{"journal_mode", "wal"},
	}
	for _, c := range checks {
		if got := rawPragma(t, path, c.pragma); got != c.want {
			t.Errorf("PRAGMA %s = %s; want %s", c.pragma, got, c.want)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); runtime.GOOS != "windows" && got != 0o600 { // Windows: ACLs, not modes
		t.Errorf("binky.db mode = %v; want 0600", got)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "main", Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReservePortBlock(ctx, "shop", "main", fixed(20000, 20004)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Worktree(ctx, "shop", "main")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != w.ID || got.PortLo != 20000 || got.PortHi != 20004 {
		t.Errorf("after reopen got id %d ports %d-%d; want id %d ports 20000-20004", got.ID, got.PortLo, got.PortHi, w.ID)
	}
	if v := rawPragma(t, path, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version after reopen = %s; want %d", v, SchemaVersion)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	_, path := newRegistry(t)
	newer := SchemaVersion + 6
	rawExec(t, path, fmt.Sprintf("PRAGMA user_version = %d;", newer))
	_, err := Open(context.Background(), path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer database: err = %v; want ErrNewerSchema", err)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("schema version is %d", newer), fmt.Sprintf("this binky's is %d", SchemaVersion), path} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	// Refusing must not have touched it.
	if v := rawPragma(t, path, "user_version"); v != fmt.Sprint(newer) {
		t.Errorf("user_version after refusal = %s; want %d", v, newer)
	}
}

func TestForeignDatabaseRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	rawExec(t, path, "PRAGMA application_id = 1234; CREATE TABLE t (x);")
	_, err := Open(context.Background(), path)
	if !errors.Is(err, ErrNotRegistry) {
		t.Fatalf("Open of another program's database: err = %v; want ErrNotRegistry", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	r, _ := newRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Worktrees(ctx); err == nil {
		t.Errorf("Worktrees with a canceled context: got nil error; want one")
	}
}

// fixed is a ChooseFunc that always picks lo..hi.
func fixed(lo, hi int) ChooseFunc {
	return func(*PortBlock, []*PortBlock) (int, int, error) { return lo, hi, nil }
}

func TestHomeIDIsStable(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "binky.db")
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.HomeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 16 {
		t.Fatalf("home id %q: want 16 hex digits", id)
	}
	r.Close()
	r, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	again, err := r.HomeID(ctx)
	if err != nil || again != id {
		t.Fatalf("home id after reopening = %q, %v; want %q", again, err, id)
	}
	other, err := Open(ctx, filepath.Join(t.TempDir(), "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if oid, _ := other.HomeID(ctx); oid == id {
		t.Fatalf("two homes got the same id %q", id)
	}
}

// TestOpenCurrentWritesNothing: opening a registry already at this
// binary's schema writes nothing to it: its bytes are the same after an
// Open and Close.
func TestOpenCurrentWritesNothing(t *testing.T) {
	ctx := context.Background()
	r, path := newRegistry(t)
	if _, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "main", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Worktrees(ctx); err != nil {
		t.Fatal(err)
	}
	again.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("Open and Close of a current registry changed %s", path)
	}
}
