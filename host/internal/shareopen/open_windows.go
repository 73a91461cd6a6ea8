//go:build windows

package shareopen

import (
	"os"

	"golang.org/x/sys/windows"
)

// Open opens a log file with FILE_SHARE_DELETE besides read and write
// sharing, as Unix always allows: a log rolls (is renamed) while a service
// or a follower still has it open. os.OpenFile does not ask for it. flag
// is os.O_RDONLY, or os.O_WRONLY|os.O_APPEND|os.O_CREATE (what the logs
// use); perm is ignored (ACLs, not modes, guard files on Windows).
func Open(path string, flag int, _ os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(windows.GENERIC_READ)
	switch {
	case flag&os.O_APPEND != 0:
		access = windows.FILE_APPEND_DATA | windows.SYNCHRONIZE | windows.FILE_READ_ATTRIBUTES
	case flag&(os.O_WRONLY|os.O_RDWR) != 0:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	disposition := uint32(windows.OPEN_EXISTING)
	if flag&os.O_CREATE != 0 {
		disposition = windows.OPEN_ALWAYS
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	// Inheritable like os.OpenFile's handles are not; a child gets the
	// handle through exec.Cmd's stdout, which duplicates it.
	h, err := windows.CreateFile(p, access, share, nil, disposition, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
