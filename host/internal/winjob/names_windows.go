//go:build windows

package winjob

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	ntOpenDirectoryObject  = ntdll.NewProc("NtOpenDirectoryObject")
	ntQueryDirectoryObject = ntdll.NewProc("NtQueryDirectoryObject")
)

// objectDirectoryInformation is OBJECT_DIRECTORY_INFORMATION.
type objectDirectoryInformation struct {
	Name, TypeName windows.NTUnicodeString
}

const (
	directoryQuery   = 0x0001     // DIRECTORY_QUERY
	statusNoMoreData = 0x8000001A // STATUS_NO_MORE_ENTRIES
)

// sessionObjects is the object directory Local\ names live in:
// \Sessions\<id>\BaseNamedObjects, or \BaseNamedObjects in session 0.
func sessionObjects() string {
	var id uint32
	if err := windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &id); err != nil || id == 0 {
		return `\BaseNamedObjects`
	}
	return fmt.Sprintf(`\Sessions\%d\BaseNamedObjects`, id)
}

// Names lists the service jobs whose marker starts with markerPrefix
// (Name(marker) for each such marker), read from the global object
// directory and, for jobs an earlier binky named in Local\, from this
// session's. A job whose marker was too long for a name (hashed) is not
// found this way.
func Names(markerPrefix string) ([]string, error) {
	want := namePrefix + escaper.Replace(markerPrefix)
	out, err := jobNames(`\BaseNamedObjects`, want)
	if err != nil {
		return out, err
	}
	if s := sessionObjects(); s != `\BaseNamedObjects` {
		more, _ := jobNames(s, want) // best effort: the old place
		for _, n := range more {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// jobNames lists the jobs in the object directory dirName whose names
// start with want.
func jobNames(dirName, want string) ([]string, error) {
	dir, err := windows.NewNTUnicodeString(dirName)
	if err != nil {
		return nil, err
	}
	oa := windows.OBJECT_ATTRIBUTES{ObjectName: dir}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h windows.Handle
	if st, _, _ := ntOpenDirectoryObject.Call(uintptr(unsafe.Pointer(&h)), directoryQuery, uintptr(unsafe.Pointer(&oa))); st != 0 {
		return nil, fmt.Errorf("open object directory %s: NTSTATUS %#x", dir, st)
	}
	defer windows.CloseHandle(h)
	var out []string
	buf := make([]byte, 4096)
	var ctx uint32
	for first := true; ; first = false {
		restart := uintptr(0)
		if first {
			restart = 1
		}
		// One entry at a time: the context counts entries, so a name too
		// long for the buffer is the only thing that can stop the walk.
		st, _, _ := ntQueryDirectoryObject.Call(uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
			1, restart, uintptr(unsafe.Pointer(&ctx)), 0)
		if st == statusNoMoreData {
			return out, nil
		}
		if st != 0 && st != 0x105 { // STATUS_MORE_ENTRIES
			return out, fmt.Errorf("list object directory %s: NTSTATUS %#x", dir, st)
		}
		e := (*objectDirectoryInformation)(unsafe.Pointer(&buf[0]))
		if e.TypeName.String() != "Job" {
			continue
		}
		if n := e.Name.String(); strings.HasPrefix(n, want) {
			out = append(out, n)
		}
	}
}
