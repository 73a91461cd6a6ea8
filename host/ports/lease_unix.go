//go:build !windows

package ports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// defaultLeaseDir is under /tmp, not os.TempDir(): $TMPDIR is often set per
// user or per session (pam_tmpdir, macOS's /var/folders/…/T, sandboxes),
// and two daemons that read different ones would lease in two stores.
func defaultLeaseDir() string { return "/tmp/binky-port-leases" }

// prepareLeaseDir makes dir (sticky, world-writable: every user's daemon
// leases there, none can delete another's leases) when it is missing, and
// checks it.
func prepareLeaseDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		switch err := os.Mkdir(dir, os.ModeSticky|0o777); {
		case err == nil:
			// The umask took bits away: put them back.
			if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrExist): // another process made it first
			return err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	return checkLeaseDir(fi)
}

// checkLeaseDir refuses a lease directory anyone could tamper with.
func checkLeaseDir(fi fs.FileInfo) error {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return fmt.Errorf("it is a symbolic link, which binky refuses; remove it, or set %s to another directory", LeaseDirEnv)
	case !fi.IsDir():
		return fmt.Errorf("it is not a directory; remove it, or set %s to another directory", LeaseDirEnv)
	case mode&fs.ModeSticky != 0:
		return nil
	case mode.Perm()&0o022 != 0:
		return fmt.Errorf("it is writable by others (%v) without the sticky bit, so anyone could delete the leases; chmod +t it, remove it, or set %s to another directory", mode.Perm(), LeaseDirEnv)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return fmt.Errorf("it belongs to uid %d, neither you nor root, and is not sticky; remove it, or set %s to another directory", st.Uid, LeaseDirEnv)
	}
	return nil
}

// openFlags never follow a symbolic link in the last component (the lease
// directory is shared) and never block on a FIFO someone put there.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// openLockFile opens the lock file, making it 0666 (whatever the umask, so
// every user can open it) when it is missing. A user who may not write it
// opens it read-only: flock needs no more.
func openLockFile(path string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|openFlags, 0)
		if errors.Is(err, fs.ErrPermission) {
			f, err = os.OpenFile(path, os.O_RDONLY|openFlags, 0)
		}
		if err == nil {
			return regular(f)
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock file %s is a symbolic link, which binky refuses; remove it", path)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|openFlags, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first: open theirs
		}
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(0o666); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return nil, fmt.Errorf("lock file %s keeps appearing and vanishing", path)
}

// openNoFollow opens a regular file for reading, not through a symbolic
// link.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	return regular(f)
}

// regular returns f if it is a regular file, else closes it.
func regular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", f.Name())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockFile waits for an exclusive flock on f.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
