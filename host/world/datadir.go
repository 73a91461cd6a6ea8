package world

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// dataDir is where a file adapter keeps the slices of services that name
// it as name: $BINKY_HOME/data/<implementation>, so `sqlite3` (an alias)
// and `sqlite` share one directory. Binkies before session 5 used the name
// as written in binky.toml; the first call for an alias moves what such a
// binky left in data/<alias> into data/<implementation> (migrateDataDir).
func (e *Engine) dataDir(name string) string {
	impl := e.implementation(context.Background(), name)
	dir := filepath.Join(e.home, "data", impl)
	if impl != name {
		e.dataMoves.Get(name).Lock()
		e.migrateDataDir(filepath.Join(e.home, "data", name), dir)
		e.dataMoves.Get(name).Unlock()
	}
	return dir
}

// migrateDataDir moves every entry of the alias directory from into the
// implementation's directory to, then removes from when it is empty. An
// entry whose name to already holds stays where it is (logged): nothing is
// overwritten, and such a slice is still reached by its old path's owner
// through remove --force. A missing from is the common case: nothing to do.
func (e *Engine) migrateDataDir(from, to string) {
	ents, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		_ = os.Remove(from)
		return
	}
	if err != nil {
		e.log.Warn("cannot read an alias's old data directory", "dir", from, "error", err)
		return
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		e.log.Warn("cannot make the adapter data directory", "dir", to, "error", err)
		return
	}
	for _, ent := range ents {
		src, dst := filepath.Join(from, ent.Name()), filepath.Join(to, ent.Name())
		if _, err := os.Lstat(dst); err == nil {
			e.log.Warn("an alias's old data entry is also in the implementation's directory; left in place", "old", src, "new", dst)
			continue
		}
		if err := os.Rename(src, dst); err != nil {
			e.log.Warn("cannot move an alias's data entry", "old", src, "new", dst, "error", err)
			continue
		}
		e.log.Info("moved an alias's data entry to its implementation's directory", "old", src, "new", dst)
	}
	_ = os.Remove(from) // only when it is empty now
}
