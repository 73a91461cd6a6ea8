package adapter

import (
	"os"
	"path/filepath"
)

// DefaultSystemDirs are the system adapter directories searched when
// Options.SystemDirs is nil: %ProgramFiles%\Binky\adapters, where an
// installer puts adapters on Windows.
func DefaultSystemDirs() []string {
	pf := os.Getenv("ProgramFiles")
	if pf == "" {
		return nil
	}
	return []string{filepath.Join(pf, "Binky", "adapters")}
}
