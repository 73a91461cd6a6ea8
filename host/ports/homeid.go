package ports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WriteHomeID mirrors id into home's HomeIDFile, replacing a different or
// partial one atomically: the daemon writes it at start, so that any binky
// process on the machine — another home's daemon deciding whether a port
// lease is stale — can tell a live home from a gone or recreated one
// without opening its registry.
func WriteHomeID(home, id string) error {
	path := filepath.Join(home, HomeIDFile)
	if b, err := os.ReadFile(path); err == nil && string(bytes.TrimSpace(b)) == id {
		return nil
	}
	tmp, err := os.CreateTemp(home, ".home.id-*")
	if err != nil {
		return fmt.Errorf("record the home id: %w", err)
	}
	_, werr := tmp.WriteString(id + "\n")
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the home id in %s: %w", path, werr)
	}
	return nil
}
