//go:build windows

package ports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/internal/winlock"
)

func defaultLeaseDir() string {
	pd := os.Getenv("ProgramData")
	if pd == "" {
		pd = `C:\ProgramData`
	}
	return filepath.Join(pd, "binky", "port-leases")
}

// ownerPrefix starts the name of a user's subdirectory: sid-<SID>.
const ownerPrefix = "sid-"

// currentOwner is the SID that owns the files this process makes: the
// token's default owner (the user, or Administrators when elevated). It
// is read off a file made for the purpose, since that is what every other
// reader will see (and Wine's TokenOwner names another SID than the one
// its files get).
func currentOwner() (string, error) {
	f, err := os.CreateTemp("", "binky-owner-")
	if err != nil {
		return tokenOwner()
	}
	defer os.Remove(f.Name())
	defer f.Close()
	o, err := handleOwner(windows.Handle(f.Fd()))
	if err != nil {
		return tokenOwner()
	}
	return o, nil
}

// tokenOwner is the owner the process token gives new objects.
func tokenOwner() (string, error) {
	tok := windows.GetCurrentProcessToken()
	n := uint32(64)
	for {
		b := make([]byte, n)
		err := windows.GetTokenInformation(tok, windows.TokenOwner, &b[0], n, &n)
		if err == nil {
			owner := (*struct{ Owner *windows.SID })(unsafe.Pointer(&b[0])).Owner
			return owner.String(), nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || n <= uint32(len(b)) {
			return "", err
		}
	}
}

// ownerLabel names a user in a message: "user S-1-5-21-…".
func ownerLabel(o string) string {
	if o == "" {
		return "an unknown user"
	}
	return "user " + o
}

// isAdminOwner reports whether o is SYSTEM, Administrators or
// TrustedInstaller.
func isAdminOwner(o string) bool {
	switch o {
	case "S-1-5-18", "S-1-5-32-544", "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464":
		return true
	}
	return false
}

// leaseOwner is the user a lease names.
func leaseOwner(le *Lease) string { return le.SID }

// stampOwner makes le name user o.
func stampOwner(le *Lease, o string) { le.UID, le.SID = -1, o }

// statOwner is the owner SID of the file at path.
func statOwner(path string, _ fs.FileInfo) (string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return "", err
	}
	o, _, err := sd.Owner()
	if err != nil || o == nil {
		return "", fmt.Errorf("owner of %s: %v", path, err)
	}
	return o.String(), nil
}

// handleOwner is the owner SID of an open file.
func handleOwner(h windows.Handle) (string, error) {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return "", err
	}
	o, _, err := sd.Owner()
	if err != nil || o == nil {
		return "", fmt.Errorf("file owner: %v", err)
	}
	return o.String(), nil
}

// makeTopDir makes the lease directory. ProgramData's inherited ACL lets
// every user make a directory there and keeps each its creator's.
func makeTopDir(dir string) error { return os.MkdirAll(dir, 0o777) }

// checkTopDir refuses a lease directory user me cannot trust: one that is
// not a directory, or whose owner is neither an administrator nor me (its
// owner may delete every user's subdirectory).
func checkTopDir(dir string, fi fs.FileInfo, me string) error {
	other := fmt.Sprintf("or set %s to a directory of your own (then only your own homes share it)", LeaseDirEnv)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &DirRefusedError{dir, "it is a symbolic link", "remove it, " + other}
	case !fi.IsDir():
		return &DirRefusedError{dir, "it is not a directory", "remove it, " + other}
	}
	o, err := statOwner(dir, fi)
	if err != nil {
		return &DirRefusedError{dir, fmt.Sprintf("its owner cannot be read (%v)", err), other}
	}
	if o != me && !isAdminOwner(o) {
		return &DirRefusedError{dir, fmt.Sprintf("it belongs to %s, neither an administrator nor you (%s), and its owner could delete your leases", ownerLabel(o), ownerLabel(me)),
			fmt.Sprintf(`have an administrator own it (takeown /F "%s" /A), %s`, dir, other)}
	}
	return nil
}

// securityAttributes holds a security descriptor made from sddl.
func securityAttributes(sddl string) (*windows.SecurityAttributes, error) {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	return sa, nil
}

// makeOwnDir makes this user's subdirectory with a protected DACL: this
// user and SYSTEM have full control, everyone may read; no one else may
// add a file. What is made in it inherits that.
func makeOwnDir(path, me string) error {
	sa, err := securityAttributes("D:P(A;OICI;FA;;;" + me + ")(A;OICI;FA;;;SY)(A;OICI;FRFX;;;WD)")
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	if err := windows.CreateDirectory(p, sa); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// openLockFile opens user me's lock file, making it when missing with
// a DACL that admits that user alone: no other user can open it, so none
// can lock it.
func openLockFile(path, me string) (*os.File, error) {
	sa, err := securityAttributes("D:P(A;;FA;;;" + me + ")")
	if err != nil {
		return nil, err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, sa, windows.OPEN_ALWAYS,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("lock file %s is %s, not a regular file; remove it", path, kindOf(fi.Mode()))
	}
	if err == nil {
		if o, _ := handleOwner(h); o != me {
			err = fmt.Errorf("lock file %s belongs to %s, not you; remove it", path, ownerLabel(o))
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openLeaseFile opens a lease file for reading, not through a reparse
// point (a symbolic link or junction), when it is a regular file; owner is
// the opened file's owner.
func openLeaseFile(path string) (*os.File, string, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, "", err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, "", fmt.Errorf("it cannot be opened: %w", err)
	}
	f := os.NewFile(uintptr(h), path)
	owner, _ := handleOwner(h)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, owner, fmt.Errorf("it cannot be read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, owner, fmt.Errorf("it is %s, not a regular file", kindOf(fi.Mode()))
	}
	return f, owner, nil
}

// openNoFollow opens a regular file for reading.
func openNoFollow(path string) (*os.File, error) {
	f, _, err := openLeaseFile(path)
	return f, err
}

// tryLock takes an exclusive LockFileEx lock on f without waiting.
func tryLock(f *os.File) (bool, error) { return winlock.TryLock(f, true) }

func unlockFile(f *os.File) { winlock.Unlock(f) }

// lockHolder cannot be told on Windows.
func lockHolder(*os.File) (int, string) { return 0, "" }

// procStart is pid's creation time; 0 when it cannot be read.
func procStart(pid int) uint64 {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil || code != 259 { // STILL_ACTIVE
		return 0
	}
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		return 0
	}
	return uint64(c.HighDateTime)<<32 | uint64(c.LowDateTime)
}

// procAlive reports whether pid runs and is the process created at start.
// Its user is not compared: another user's process token cannot be read
// without privileges.
func procAlive(pid int, start uint64, _ string) bool {
	return pid > 0 && start != 0 && procStart(pid) == start
}

// unprivilegedPortStart: Windows lets every user bind every port.
func unprivilegedPortStart() int { return 0 }
