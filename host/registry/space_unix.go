//go:build !windows

package registry

import (
	"errors"
	"syscall"
)

// spaceKind says whether err is the file system refusing new data, and
// returns the system's error.
func spaceKind(err error) (SpaceKind, error) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return 0, nil
	}
	switch errno {
	case syscall.ENOSPC:
		return DiskFull, errno
	case syscall.EDQUOT:
		return QuotaExceeded, errno
	case syscall.EROFS:
		return ReadOnlyFS, errno
	}
	return 0, nil
}
