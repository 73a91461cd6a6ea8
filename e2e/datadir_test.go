//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file adapter named by an alias keeps its slices in its
// implementation's data directory, and what an older binky left under the
// alias's name is moved there (issue 31).
func TestAliasDataDirFollowsImplementation(t *testing.T) {
	e := newEnv(t, `
[project]
name = "alias"
port_range = PORTRANGE

[services.db]
adapter = "sqlite3"
`)
	old := filepath.Join(e.home, "data", "sqlite3")
	os.MkdirAll(old, 0o700)
	os.WriteFile(filepath.Join(old, "left-by-an-older-binky.db"), []byte("x"), 0o600)
	e.must("up", "-q", "w")
	addr := e.status().world(t, "w").service(t, "db").Address
	if !strings.Contains(addr, filepath.Join(e.home, "data", "sqlite")+string(filepath.Separator)) {
		t.Errorf("slice of adapter sqlite3 at %q; want under data/sqlite", addr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "sqlite", "left-by-an-older-binky.db")); err != nil {
		t.Errorf("the alias's old data was not moved: %v", err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("data/sqlite3 is still there: %v", err)
	}
}
