//go:build !windows

package adapter

// SystemDir is where distribution packages install adapters
// (binky-adapter-<family> .deb packages put theirs here). Discovery searches
// it after PATH and $BINKY_HOME/adapters.
const SystemDir = "/usr/lib/binky/adapters"

// DefaultSystemDirs are the system adapter directories searched when
// Options.SystemDirs is nil.
func DefaultSystemDirs() []string { return []string{SystemDir} }
