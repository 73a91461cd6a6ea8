//go:build windows

package client

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	ntdll           = windows.NewLazySystemDLL("ntdll.dll")
	ntResumeProcess = ntdll.NewProc("NtResumeProcess")
)

// job is an adapter's unnamed Job Object, which kills on close: what the
// adapter starts is in it too, kill ends them all, and when the host dies
// its handle closes and the job dies with it. Windows' twin of the
// process group on Unix. A nil *job (none could be made: a parent job that
// forbids nesting, Windows before 8) starts the adapter as cmd.Start would
// and kills nothing.
type job struct {
	mu     sync.Mutex // kill and close may race (a timed-out call, Close)
	h      windows.Handle
	closed bool
}

// newJob makes an unnamed job that kills on close, or returns nil.
func newJob() *job {
	h, err := windows.CreateJobObject(nil, nil)
	if h == 0 || err != nil {
		return nil
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil
	}
	return &job{h: h}
}

// start starts cmd (not started yet) inside the job: created suspended
// (CREATE_SUSPENDED added to its creation flags), assigned, then resumed,
// so it runs no instruction outside the job and nothing it starts can
// escape. os/exec keeps the thread handle to itself, so the resume is
// NtResumeProcess (as host/internal/winjob does). On failure the started
// process is killed and reaped.
func (j *job) start(cmd *exec.Cmd) error {
	if j == nil {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := j.adopt(uint32(cmd.Process.Pid)); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	return nil
}

// startAgain reports whether a start that failed is worth another try.
// Under Wine, CreateProcess now and then answers ERROR_INTERNAL_ERROR
// ("Internal error."): the new process died in Wine's loader before it
// reported itself started (ntdll's NtCreateUserProcess turns a start
// that never reported success into STATUS_INTERNAL_ERROR), so nothing of
// the adapter ran and starting it again is safe. One conformance call in
// a CI run of thousands met it; Windows itself does not answer it.
func startAgain(err error) bool { return errors.Is(err, windows.ERROR_INTERNAL_ERROR) }

func (j *job) adopt(pid uint32) error {
	// The process is our unreaped child, so its pid names it still.
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|
		windows.PROCESS_SUSPEND_RESUME|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("open new adapter process %d: %w", pid, err)
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("put adapter process %d in a job: %w", pid, err)
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(p)); st != 0 {
		return fmt.Errorf("resume adapter process %d: NTSTATUS %#x", pid, st)
	}
	return nil
}

// kill terminates every process in the job (the adapter and whatever it
// started); the job stays usable, empty.
func (j *job) kill() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		_ = windows.TerminateJobObject(j.h, 1)
	}
}

// close closes the job's handle (once), which ends what is left in it;
// kill does nothing after it.
func (j *job) close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.closed = true
		_ = windows.CloseHandle(j.h)
	}
}
