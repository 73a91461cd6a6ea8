//go:build windows

package sqliteadapter

import (
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/sdk"
)

// inUseError is the refusal for a slice file that another process holds
// open without FILE_SHARE_DELETE.
func inUseError(file string) error {
	by := "another process"
	if who := fileHolders(file); len(who) > 0 {
		by = strings.Join(who, ", ")
	}
	return sdk.Errorf(sdk.CodeConflict,
		"%s is in use by %s, which opened it without sharing its deletion (as SQLite opens a database); nothing was removed; stop that program or let it close the database, then run this again",
		file, by)
}

// The Restart Manager (rstrtmgr.dll, Windows Vista and later) names the
// processes that have a file open, which is what Windows Explorer's "file
// in use" dialog shows. These are read-only handles to a system DLL.
var (
	modRstrtmgr             = windows.NewLazySystemDLL("rstrtmgr.dll")
	procRmStartSession      = modRstrtmgr.NewProc("RmStartSession")
	procRmRegisterResources = modRstrtmgr.NewProc("RmRegisterResources")
	procRmGetList           = modRstrtmgr.NewProc("RmGetList")
	procRmEndSession        = modRstrtmgr.NewProc("RmEndSession")
)

// rmProcessInfo is RM_PROCESS_INFO.
type rmProcessInfo struct {
	pid         uint32
	started     windows.Filetime
	appName     [256]uint16 // CCH_RM_MAX_APP_NAME+1
	serviceName [64]uint16  // CCH_RM_MAX_SVC_NAME+1
	appType     uint32
	appStatus   uint32
	sessionID   uint32
	restartable int32
}

// fileHolders returns "name (pid N)" for each process that has file open,
// or nothing when the Restart Manager is missing or cannot tell (Wine's
// is a stub).
func fileHolders(file string) []string {
	if procRmStartSession.Find() != nil || procRmRegisterResources.Find() != nil ||
		procRmGetList.Find() != nil || procRmEndSession.Find() != nil {
		return nil
	}
	var session uint32
	var key [33]uint16 // CCH_RM_SESSION_KEY+1
	if r, _, _ := procRmStartSession.Call(uintptr(unsafe.Pointer(&session)), 0, uintptr(unsafe.Pointer(&key[0]))); r != 0 {
		return nil
	}
	defer procRmEndSession.Call(uintptr(session))
	p, err := windows.UTF16PtrFromString(file)
	if err != nil {
		return nil
	}
	names := []*uint16{p}
	if r, _, _ := procRmRegisterResources.Call(uintptr(session), 1, uintptr(unsafe.Pointer(&names[0])), 0, 0, 0, 0); r != 0 {
		return nil
	}
	infos := make([]rmProcessInfo, 4)
	var n uint32
	listed := false
	for range 3 {
		var need, reasons uint32
		n = uint32(len(infos))
		r, _, _ := procRmGetList.Call(uintptr(session), uintptr(unsafe.Pointer(&need)), uintptr(unsafe.Pointer(&n)),
			uintptr(unsafe.Pointer(&infos[0])), uintptr(unsafe.Pointer(&reasons)))
		if r == uintptr(windows.ERROR_MORE_DATA) {
			infos = make([]rmProcessInfo, need+2) // more may open it meanwhile
			continue
		}
		if r != 0 {
			return nil
		}
		listed = true
		break
	}
	if !listed {
		return nil
	}
	var out []string
	for _, in := range infos[:min(int(n), len(infos))] {
		name := windows.UTF16ToString(in.appName[:])
		if name == "" {
			name = "a process"
		}
		out = append(out, fmt.Sprintf("%s (pid %d)", name, in.pid))
	}
	return out
}
