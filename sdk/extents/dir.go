package extents

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir sums File over the regular files in dir (not below); a file gone
// meanwhile is passed over.
func Dir(dir string) (mapped, shared int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		m, s, err := File(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // dropped meanwhile (a temporary relation)
		}
		if err != nil {
			return 0, 0, err
		}
		mapped += m
		shared += s
	}
	return mapped, shared, nil
}
