//go:build !windows

package shareopen

import "os"

// Open is os.OpenFile: on Unix a file can always be renamed or
// removed while open (see open_windows.go).
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
