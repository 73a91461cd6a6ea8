package registry

import (
	"errors"
	"syscall"
)

// The Windows errors that mean a volume takes no new data.
const (
	errorWriteProtect      syscall.Errno = 19   // ERROR_WRITE_PROTECT
	errorHandleDiskFull    syscall.Errno = 39   // ERROR_HANDLE_DISK_FULL
	errorDiskFull          syscall.Errno = 112  // ERROR_DISK_FULL
	errorDiskQuotaExceeded syscall.Errno = 1295 // ERROR_DISK_QUOTA_EXCEEDED
)

// spaceKind says whether err is the file system refusing new data, and
// returns the system's error.
func spaceKind(err error) (SpaceKind, error) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return 0, nil
	}
	switch errno {
	case errorDiskFull, errorHandleDiskFull:
		return DiskFull, errno
	case errorDiskQuotaExceeded:
		return QuotaExceeded, errno
	case errorWriteProtect:
		return ReadOnlyFS, errno
	}
	return 0, nil
}
