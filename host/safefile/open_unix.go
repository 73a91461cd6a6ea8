//go:build !windows

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens the file at path for reading when it is a regular file
// (a symlink is followed). Anything else is refused, without blocking, with
// an *Error wrapping ErrNotRegular: the open is non-blocking (a FIFO with
// no writer, a terminal or a device node opens at once) and the type
// checked is the opened descriptor's (fstat), so the path cannot be
// swapped between the check and the open. The file returned reads in
// blocking mode, as os.Open's does.
func OpenRegular(path string) (*os.File, error) { return openRegular(path, 0) }

// OpenRegularNoFollow is OpenRegular for a path that must itself be the
// regular file: a symlink at path is refused ("is a symlink, not a
// regular file") without opening what it points to (O_NOFOLLOW).
// Directories above path are still followed.
func OpenRegularNoFollow(path string) (*os.File, error) {
	return openRegular(path, syscall.O_NOFOLLOW)
}

func openRegular(path string, flags int) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC|flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if flags&syscall.O_NOFOLLOW != 0 && (err == syscall.ELOOP || err == syscall.EMLINK) {
			// O_NOFOLLOW met a symlink (ELOOP; EMLINK on FreeBSD).
			if st, serr := os.Lstat(path); serr == nil && st.Mode()&fs.ModeSymlink != 0 {
				return nil, notRegular(path, st.Mode())
			}
		}
		if err == syscall.ENXIO || err == syscall.EOPNOTSUPP {
			// A socket (or a device with no driver) cannot be opened at
			// all: name what it is rather than the errno.
			if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
				return nil, notRegular(path, st.Mode())
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, notRegular(path, unixMode(uint32(st.Mode)))
	}
	// A regular file never blocks; clear the flag so os.NewFile treats
	// the descriptor as an ordinary file rather than a pollable one.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		err := syscall.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

// unixMode turns the S_IFMT bits of a stat mode into an fs.FileMode type.
func unixMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}
