package golden

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Size is the bytes a template takes on disk when its adapter keeps files
// under dataDir ($BINKY_HOME/data/<adapter>, as sqlite does): the files
// named <slice>.db or <slice>.db-* (journal, WAL) up to three levels
// below. It is -1 when no such file is found, as for a server's database.
func Size(dataDir, slice string) int64 {
	var total int64
	found := false
	base := filepath.Clean(dataDir)
	filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if de.IsDir() {
			if rel, _ := filepath.Rel(base, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 2 {
				return filepath.SkipDir
			}
			return nil
		}
		n := de.Name()
		if n == slice+".db" || strings.HasPrefix(n, slice+".db-") {
			if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() {
				total += fi.Size()
				found = true
			}
		}
		return nil
	})
	if !found {
		return -1
	}
	return total
}
