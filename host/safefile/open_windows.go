//go:build windows

package safefile

import (
	"os"
)

// OpenRegular opens the file at path for reading when it is a regular file
// (a symlink is followed). Anything else is refused with an *Error
// wrapping ErrNotRegular. Windows has no FIFOs in the filesystem and its
// opens of devices and pipes do not wait for a peer, so the type is
// checked first by path (not to open a device at all) and again on the
// opened handle.
func OpenRegular(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, st.Mode())
	}
	return f, nil
}

// OpenRegularNoFollow is OpenRegular for a path that must itself be the
// regular file: a symlink (or another reparse point) at path is refused
// ("is a symlink, not a regular file") without opening what it points to.
// Windows has no O_NOFOLLOW; the path's own entry is checked with Lstat
// first, and the opened handle again.
func OpenRegularNoFollow(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	return OpenRegular(path)
}
