//go:build windows

package sqliteadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// shareAll lets other handles read, write, and remove or rename the file
// while ours is open, as Unix always allows. os.OpenFile leaves out
// FILE_SHARE_DELETE.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// openShared opens a slice file (a database, its WAL, a claim) with
// FILE_SHARE_DELETE besides read and write sharing, so that a handle the
// adapter holds never stops another process from destroying or replacing
// the slice. flag is os.O_RDONLY, os.O_WRONLY or os.O_RDWR, with
// os.O_CREATE and os.O_EXCL as os.OpenFile reads them (any other flag is
// refused); perm is ignored (ACLs, not modes, guard files on Windows). As
// with os.OpenFile, a directory opens for reading, an exclusive create does
// not follow a link, and the handle is not inheritable.
func openShared(path string, flag int, _ os.FileMode) (*os.File, error) {
	const known = os.O_RDONLY | os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_EXCL
	if flag&^known != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("openShared does not take flags %#x", flag&^known)}
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	default:
		access = windows.GENERIC_READ
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS
	}
	var disposition uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.CREATE_NEW
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	default:
		disposition = windows.OPEN_EXISTING
	}
	h, err := windows.CreateFile(p, access, shareAll, nil, disposition, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// inUseWait bounds how long a removal waits for another process to close a
// slice file it opened without FILE_SHARE_DELETE; inUsePoll is how often it
// looks again.
const (
	inUseWait = 2 * time.Second
	inUsePoll = 100 * time.Millisecond
)

// holdForRemoval opens every file of files that exists for deletion
// (DELETE access, everything shared), retrying for up to inUseWait while
// one is open somewhere without FILE_SHARE_DELETE, and returns a function
// that closes them. While they are held nobody can open the files without
// sharing their deletion, so the removals that follow succeed. When a file
// stays in use it returns a conflict naming the file and its holders, and
// holds nothing: the caller removes nothing.
func holdForRemoval(ctx context.Context, files []string) (func(), error) {
	deadline := time.Now().Add(inUseWait)
	for {
		hs, busy, err := openForDelete(files)
		if err != nil {
			return nil, err
		}
		if busy == "" {
			return func() { closeAll(hs) }, nil
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return nil, inUseError(busy)
		}
		t := time.NewTimer(inUsePoll)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// openForDelete opens each existing file of files for deletion. busy names
// the first one another handle keeps from being deleted (nothing is then
// held).
func openForDelete(files []string) (hs []windows.Handle, busy string, err error) {
	for _, f := range files {
		p, err := windows.UTF16PtrFromString(f)
		if err != nil {
			closeAll(hs)
			return nil, "", &os.PathError{Op: "open for removal", Path: f, Err: err}
		}
		// The link itself, not what it points at (os.Remove removes the
		// link); a directory opens too, so os.Remove still says what it is.
		h, err := windows.CreateFile(p, windows.DELETE, shareAll, nil, windows.OPEN_EXISTING,
			windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		switch {
		case err == nil:
			hs = append(hs, h)
		case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		case errors.Is(err, windows.ERROR_SHARING_VIOLATION):
			closeAll(hs)
			return nil, f, nil
		default:
			closeAll(hs)
			return nil, "", &os.PathError{Op: "open for removal", Path: f, Err: err}
		}
	}
	return hs, "", nil
}

func closeAll(hs []windows.Handle) {
	for _, h := range hs {
		_ = windows.CloseHandle(h)
	}
}
