package world

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// What an older binky kept under an alias's name moves to the
// implementation's directory; an entry already there is never overwritten.
func TestMigrateDataDir(t *testing.T) {
	home := t.TempDir()
	d := &Engine{home: home, log: hclog.NewNullLogger()}
	from, to := filepath.Join(home, "data", "sqlite3"), filepath.Join(home, "data", "sqlite")
	os.MkdirAll(from, 0o700)
	os.MkdirAll(to, 0o700)
	os.WriteFile(filepath.Join(from, "p_w.db"), []byte("old world"), 0o600)
	os.WriteFile(filepath.Join(from, "p_x.db"), []byte("alias copy"), 0o600)
	os.WriteFile(filepath.Join(to, "p_x.db"), []byte("implementation copy"), 0o600)

	d.migrateDataDir(from, to)
	if b, _ := os.ReadFile(filepath.Join(to, "p_w.db")); string(b) != "old world" {
		t.Errorf("p_w.db not moved: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(to, "p_x.db")); string(b) != "implementation copy" {
		t.Errorf("p_x.db overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(from, "p_x.db")); string(b) != "alias copy" {
		t.Errorf("the clashing entry did not stay in place: %q", b)
	}
	os.Remove(filepath.Join(from, "p_x.db"))
	d.migrateDataDir(from, to)
	if _, err := os.Stat(from); !os.IsNotExist(err) {
		t.Errorf("the empty alias directory was not removed: %v", err)
	}
	d.migrateDataDir(from, to) // nothing there: nothing to do
}
