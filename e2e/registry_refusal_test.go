package e2e

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/registry"
)

// TestRegistryRefusal: with a binky.db that is not Binky's (not SQLite,
// another program's database with or without an application id) or is
// newer than this binary, `binky status` fails, its error says why and
// names the file, and the file is left byte for byte as it was, with no
// -wal or -shm beside it.
func TestRegistryRefusal(t *testing.T) {
	t.Parallel()
	sqliteFile := func(script string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		want  []string
	}{
		{"not SQLite", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("these are my notes\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"not a binky registry", "is not a SQLite database"}},
		{"another program's application id", sqliteFile("PRAGMA application_id = 4242; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');"),
			[]string{"not a binky registry", "another program", "application_id 0x1092"}},
		{"no application id, foreign tables", sqliteFile("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');"),
			[]string{"not a binky registry", "another program", "notes"}},
		{"newer schema", sqliteFile(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d; CREATE TABLE worktrees (id INTEGER PRIMARY KEY);", registry.AppID, registry.SchemaVersion+5)),
			[]string{"newer binky", fmt.Sprintf("schema version is %d, this binky's is %d", registry.SchemaVersion+5, registry.SchemaVersion), "upgrade binky"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "[project]\nname = \"refused\"\nport_range = PORTRANGE\n")
			if err := os.MkdirAll(e.home, 0o700); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(e.home, registry.FileName)
			tt.plant(t, db)
			before := registryFileSum(t, db)
			for _, side := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(db + side); err == nil {
					t.Fatalf("setup left %s%s", registry.FileName, side)
				}
			}

			r := e.binky("status")
			if r.code == 0 {
				t.Fatalf("status exited 0 with a hostile binky.db; want a refusal\nstdout: %s", r.stdout)
			}
			for _, want := range append([]string{db, "set BINKY_HOME to another directory", "daemon exited at start"}, tt.want...) {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr %q; want it to contain %q", r.stderr, want)
				}
			}
			if strings.Contains(r.stderr, "see "+filepath.Join(e.home, "daemon.log")) {
				t.Errorf("stderr %q only points at daemon.log; want the reason itself", r.stderr)
			}
			if registryFileSum(t, db) != before {
				t.Errorf("the refused %s was modified", registry.FileName)
			}
			for _, side := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(db + side); err == nil {
					t.Errorf("refusing left %s%s beside it", registry.FileName, side)
				}
			}
		})
	}
}

func registryFileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}
