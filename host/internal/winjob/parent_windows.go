//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var procIsProcessInJob = kernel32.NewProc("IsProcessInJob")

// Parent is what the job this process runs in (if any) allows a child.
// An SSH session, a CI step and some terminals run their commands in a job
// that kills on close: a child that stays in it dies when the job closes.
type Parent struct {
	// InJob: this process runs in a job.
	InJob bool
	// Breakaway: a child may leave the job (JOB_OBJECT_LIMIT_BREAKAWAY_OK)
	// when created with CREATE_BREAKAWAY_FROM_JOB.
	Breakaway bool
	// Silent: children are outside the job anyway
	// (JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK).
	Silent bool
	// KillOnClose: the job ends its processes when it closes.
	KillOnClose bool
}

// Escapes reports whether a child can be started outside the job.
func (p Parent) Escapes() bool { return !p.InJob || p.Breakaway || p.Silent }

// CurrentParent reads the limits of the job this process runs in.
func CurrentParent() (Parent, error) {
	var in int32
	if r, _, err := procIsProcessInJob.Call(uintptr(windows.CurrentProcess()), 0, uintptr(unsafe.Pointer(&in))); r == 0 {
		return Parent{}, fmt.Errorf("is this process in a job: %w", err)
	}
	if in == 0 {
		return Parent{}, nil
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	// A nil job handle is the job of the calling process.
	if err := windows.QueryInformationJobObject(0, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return Parent{InJob: true}, fmt.Errorf("read the limits of this process's job: %w", err)
	}
	f := info.BasicLimitInformation.LimitFlags
	return Parent{
		InJob:       true,
		Breakaway:   f&windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK != 0,
		Silent:      f&windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK != 0,
		KillOnClose: f&windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE != 0,
	}, nil
}

// CanBreakaway reports whether a child can be started outside the job
// this process runs in, by trying: cmd.exe /c exit started with
// CREATE_BREAKAWAY_FROM_JOB, which CreateProcess refuses (access denied)
// when the job forbids it. True when there is no job.
func CanBreakaway() (bool, error) {
	p, err := CurrentParent()
	if err != nil {
		return false, err
	}
	if !p.InJob || p.Silent || p.Breakaway {
		return true, nil
	}
	cmd := exec.Command(filepath.Join(systemDir(), "cmd.exe"), "/d", "/c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB | windows.CREATE_NO_WINDOW}
	err = cmd.Run()
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return false, nil
	}
	return err == nil, err
}

func systemDir() string {
	if d, err := windows.GetSystemDirectory(); err == nil {
		return d
	}
	return `C:\Windows\System32`
}
