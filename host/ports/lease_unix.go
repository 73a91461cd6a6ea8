//go:build !windows

package ports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// defaultLeaseDir is under /tmp, not os.TempDir(): $TMPDIR is often set per
// user or per session (pam_tmpdir, macOS's /var/folders/…/T, sandboxes),
// and two daemons that read different ones would lease in two stores.
func defaultLeaseDir() string { return "/tmp/binky-port-leases" }

// ownerPrefix starts the name of a user's subdirectory: uid-<uid>.
const ownerPrefix = "uid-"

// currentOwner is this process's effective uid: the owner of the files it
// makes.
func currentOwner() (string, error) { return strconv.Itoa(os.Geteuid()), nil }

// ownerLabel names a user in a message: "uid 1001".
func ownerLabel(o string) string {
	if o == "" {
		return "an unknown user"
	}
	return "uid " + o
}

// isAdminOwner reports whether o is root.
func isAdminOwner(o string) bool { return o == "0" }

// leaseOwner is the user a lease names.
func leaseOwner(le *Lease) string {
	if le.UID < 0 {
		return ""
	}
	return strconv.Itoa(le.UID)
}

// stampOwner makes le name user o.
func stampOwner(le *Lease, o string) { le.UID, _ = strconv.Atoi(o) }

// statOwner is the owner of the file fi describes.
func statOwner(_ string, fi fs.FileInfo) (string, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("no owner in the file's status")
	}
	return strconv.FormatUint(uint64(st.Uid), 10), nil
}

// makeTopDir makes the lease directory, sticky and world-writable
// whatever the umask: every user makes their subdirectory in it, none can
// remove another's.
func makeTopDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	switch err := os.Mkdir(dir, os.ModeSticky|0o777); {
	case err == nil:
		// The umask took bits away: put them back.
		return os.Chmod(dir, os.ModeSticky|0o777)
	case errors.Is(err, fs.ErrExist): // another process made it first
		return nil
	default:
		return err
	}
}

// checkTopDir refuses a lease directory user me cannot trust: one that is
// not a directory, and one whose owner is neither root nor me (its owner
// may delete every user's subdirectory, and with it their leases), or
// that others may write without the sticky bit.
func checkTopDir(dir string, fi fs.FileInfo, me string) error {
	other := fmt.Sprintf("or set %s to a directory of your own (then only your own homes share it)", LeaseDirEnv)
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return &DirRefusedError{dir, "it is a symbolic link", "remove it, " + other}
	case !fi.IsDir():
		return &DirRefusedError{dir, "it is not a directory", "remove it, " + other}
	}
	o, err := statOwner(dir, fi)
	if err != nil {
		return &DirRefusedError{dir, "its owner cannot be read", other}
	}
	if o != me && !isAdminOwner(o) {
		return &DirRefusedError{dir, fmt.Sprintf("it belongs to uid %s, neither root nor you (uid %s), and its owner could delete your leases", o, me),
			fmt.Sprintf("have root own it (sudo chown root:root %s && sudo chmod 1777 %s; the binky .deb makes it so with systemd-tmpfiles), %s", dir, dir, other)}
	}
	if mode&fs.ModeSticky == 0 && mode.Perm()&0o022 != 0 {
		return &DirRefusedError{dir, fmt.Sprintf("others may write it (%v) and it is not sticky, so anyone could delete your leases", mode.Perm()),
			fmt.Sprintf("make it sticky (chmod +t %s), %s", dir, other)}
	}
	return nil
}

// makeOwnDir makes this user's subdirectory: 0755, whatever the umask, so
// every user can read the leases in it and only this user write there.
func makeOwnDir(path, _ string) error {
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	return os.Chmod(path, 0o755)
}

// openFlags never follow a symbolic link in the last component and never
// block on a FIFO.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// openLockFile opens user me's lock file, making it 0600 when missing:
// no other user can open it, so none can take it.
func openLockFile(path, me string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|openFlags, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("lock file %s is a symbolic link, which binky refuses; remove it", path)
	}
	if err != nil {
		return nil, err
	}
	f, err = regular(f)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		if o, _ := statOwner(path, fi); o != me {
			err = fmt.Errorf("lock file %s belongs to %s, not you; remove it", path, ownerLabel(o))
		} else if fi.Mode().Perm() != 0o600 {
			err = f.Chmod(0o600)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openLeaseFile opens a lease file for reading, not through a symbolic
// link and without blocking, when it is a regular file; owner is the
// opened file's owner.
func openLeaseFile(path string) (*os.File, string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, "", errors.New("it is a symbolic link, not a regular file")
	}
	if err != nil {
		return nil, "", fmt.Errorf("it cannot be opened: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("it cannot be read: %v", err)
	}
	owner, _ := statOwner(path, fi)
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, owner, fmt.Errorf("it is %s, not a regular file", kindOf(fi.Mode()))
	}
	// A regular file never blocks: read it in blocking mode.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, owner, fmt.Errorf("it cannot be read: %v", err)
	}
	return f, owner, nil
}

// openNoFollow opens a regular file for reading, not through a symbolic
// link in its last component.
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

// tryLock takes an exclusive flock on f without waiting; false means
// another open file holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
