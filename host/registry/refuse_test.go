package registry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitemigration"
	"zombiezen.com/go/sqlite/sqlitex"
)

func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// walConn opens path in WAL mode, as another program using WAL would.
func walExec(t *testing.T, path, script string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedFileUnchanged: a file that is not Binky's, or is newer than
// this binary, is refused with the path and the reason, and Open leaves its
// bytes, its journal mode and its directory as they were (no -wal, -shm or
// -journal file).
func TestRefusedFileUnchanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		is    error
		wants []string
	}{
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("my notes, not a database\n"), 0o600)
		}, ErrNotRegistry, []string{"is not a SQLite database"}},
		{"binary junk over 100 bytes", func(t *testing.T, path string) {
			junk := make([]byte, 4096)
			for i := range junk {
				junk[i] = byte(i * 7)
			}
			os.WriteFile(path, junk, 0o600)
		}, ErrNotRegistry, []string{"is not a SQLite database"}},
		{"another program's application id", func(t *testing.T, path string) {
			rawExec(t, path, "PRAGMA application_id = 1234; CREATE TABLE notes (x);")
		}, ErrNotRegistry, []string{"another program", "application_id 0x4d2"}},
		{"no application id, foreign tables", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE notes (x); CREATE TABLE tags (y); INSERT INTO notes VALUES (1);")
		}, ErrNotRegistry, []string{"another program", "no application id", "notes, tags"}},
		{"no application id, foreign tables, WAL", func(t *testing.T, path string) {
			walExec(t, path, "CREATE TABLE notes (x);")
		}, ErrNotRegistry, []string{"no application id", "notes"}},
		{"newer schema", func(t *testing.T, path string) {
			r, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			walExec(t, path, fmt.Sprintf("PRAGMA user_version = %d;", SchemaVersion+3))
		}, ErrNewerSchema, []string{fmt.Sprintf("schema version is %d, this binky's is %d", SchemaVersion+3, SchemaVersion), "upgrade binky"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			tt.make(t, path)
			before := fileSum(t, path)
			beforeList := dirNames(t, dir)
			if len(beforeList) != 1 {
				t.Fatalf("setup left %v; want only %s", beforeList, FileName)
			}
			r, err := Open(context.Background(), path)
			if err == nil {
				r.Close()
				t.Fatalf("Open succeeded; want it refused")
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("got %v; want %v", err, tt.is)
			}
			msg := err.Error()
			for _, want := range append([]string{"open registry " + path + ": ", "BINKY_HOME"}, tt.wants...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if fileSum(t, path) != before {
				t.Errorf("Open changed the refused file's bytes")
			}
			if got := dirNames(t, dir); strings.Join(got, ",") != FileName {
				t.Errorf("after the refusal the directory holds %v; want only %s", got, FileName)
			}
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenAcceptsEmptySQLite: a SQLite file with no application id and no
// schema (made by `sqlite3 binky.db vacuum`, say) becomes the registry.
func TestOpenAcceptsEmptySQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	rawExec(t, path, "CREATE TABLE t (x); DROP TABLE t;")
	r, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open of an empty SQLite database: %v", err)
	}
	r.Close()
	if v := rawPragma(t, path, "application_id"); v != fmt.Sprint(AppID) {
		t.Errorf("application_id = %s; want %d", v, AppID)
	}
}

// TestOpenAfterCrashBeforeCheckpoint: Binky's registry whose id and schema
// are still only in its -wal (a daemon killed during its first migration)
// has a main-file header that looks foreign; it must still open.
func TestOpenAfterCrashBeforeCheckpoint(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), FileName)
	conn, err := sqlite.OpenConn(src, openFlags)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := sqlitemigration.Migrate(context.Background(), conn, schema()); err != nil {
		t.Fatal(err)
	}
	// Copy the files while the connection is open, as a crash leaves them.
	dst := filepath.Join(t.TempDir(), FileName)
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, src+suffix, dst+suffix)
	}
	if id := headerAppID(t, dst); id != 0 {
		t.Fatalf("the copied main file's header has application_id %#x; want 0 (all in the -wal) for this test to mean anything", id)
	}
	r, err := Open(context.Background(), dst)
	if err != nil {
		t.Fatalf("Open of a registry not yet checkpointed: %v", err)
	}
	defer r.Close()
	if _, err := r.Worktrees(context.Background()); err != nil {
		t.Errorf("Worktrees: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func headerAppID(t *testing.T, path string) int32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 100 {
		t.Fatalf("read header of %s: %v (%d bytes)", path, err, len(data))
	}
	return int32(binary.BigEndian.Uint32(data[68:72]))
}

func TestImmutableURI(t *testing.T) {
	t.Parallel()
	name := "a b?c#d%e"
	if runtime.GOOS == "windows" {
		name = "a b#d%e" // a Windows file name cannot hold ?
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	rawExec(t, path, "CREATE TABLE odd (x);")
	names, err := schemaNames(path)
	if err != nil || strings.Join(names, ",") != "odd" {
		t.Errorf("schemaNames in a directory with URI characters = %v, %v; want [odd]", names, err)
	}
}
