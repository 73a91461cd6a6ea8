//go:build !windows

package supervisor

import "os"

// openShared is os.OpenFile: on Unix a file can always be renamed or
// removed while open (see shareopen_windows.go).
func openShared(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
