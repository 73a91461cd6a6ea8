//go:build !windows

package shareopen

import "os"

// Replace renames from over to: on Unix a rename over a file that is
// open succeeds at once (see replace_windows.go).
func Replace(from, to string) error { return os.Rename(from, to) }
