//go:build windows

package shareopen

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// afterRefused, when set (tests), runs after each refused rename.
var afterRefused func()

// replaceFor bounds how long Replace waits for readers of the target to
// close it: they hold it for one read.
const replaceFor = 2 * time.Second

// Replace renames from over to. Windows refuses to replace a file that
// another handle holds open ("Access denied"), even one opened with
// FILE_SHARE_DELETE, where Unix replaces it at once; a reader holds the
// file only for one read, so the rename is tried again, with short waits,
// for up to two seconds.
func Replace(from, to string) error {
	deadline := time.Now().Add(replaceFor)
	wait := time.Millisecond
	for {
		err := os.Rename(from, to)
		if err == nil || !busy(err) || isDir(to) || time.Now().After(deadline) {
			return err
		}
		if afterRefused != nil {
			afterRefused()
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// busy reports whether err is a rename refused because another handle
// holds the target.
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// isDir reports whether path is a directory, which no wait makes
// replaceable.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
