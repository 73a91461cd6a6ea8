//go:build windows

package ports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

func defaultLeaseDir() string {
	pd := os.Getenv("ProgramData")
	if pd == "" {
		pd = `C:\ProgramData`
	}
	return filepath.Join(pd, "binky", "port-leases")
}

// prepareLeaseDir makes dir when it is missing and checks it. ProgramData's
// inherited ACL lets every user make files there and keeps each file its
// creator's.
func prepareLeaseDir(dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("it is a symbolic link, which binky refuses; remove it, or set %s to another directory", LeaseDirEnv)
	case !fi.IsDir():
		return fmt.Errorf("it is not a directory; remove it, or set %s to another directory", LeaseDirEnv)
	}
	return nil
}

// openLockFile opens the lock file, making it when missing; read-only when
// this user may not write it (LockFileEx needs no more).
func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY, 0)
	}
	return f, err
}

// openNoFollow opens a file for reading.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// lockFile waits for an exclusive LockFileEx lock on f's first byte.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
