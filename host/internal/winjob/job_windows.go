//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Job access rights (winnt.h); x/sys/windows does not name them.
const (
	jobAssign    = 0x0001 // JOB_OBJECT_ASSIGN_PROCESS
	jobQuery     = 0x0004 // JOB_OBJECT_QUERY
	jobTerminate = 0x0008 // JOB_OBJECT_TERMINATE
)

var (
	kernel32        = windows.NewLazySystemDLL("kernel32.dll")
	procOpenJob     = kernel32.NewProc("OpenJobObjectW")
	ntdll           = windows.NewLazySystemDLL("ntdll.dll")
	ntResumeProcess = ntdll.NewProc("NtResumeProcess")
	errJobNotFound  = errors.New("no such job")
)

// Job is an open handle to a job object. Closing it leaves the job's
// processes running unless the job kills on close (Run's jobs).
type Job struct {
	h    windows.Handle
	name string // "" for an unnamed job
	once sync.Once
}

// Service jobs are named in the Global\ namespace, so a daemon started
// from another logon session of the same user (an SSH session, the
// desktop) finds the running services by name; Local\ names are per
// session. Any user may create a job there (SeCreateGlobalPrivilege
// guards only file mappings and symbolic links); the job's default DACL
// admits its creator, SYSTEM and administrators, and a job found under
// the name is used only when this user owns it, so a job another user
// made first under a name (squatting) is refused. Jobs an earlier binky
// named in Local\ are still opened.

// global is name in the global namespace; local in the session's.
func global(name string) (*uint16, error) { return windows.UTF16PtrFromString(`Global\` + name) }
func local(name string) (*uint16, error)  { return windows.UTF16PtrFromString(`Local\` + name) }

// Create opens the job called name, creating it when there is none; name
// "" makes an unnamed job. killOnClose ends the job's processes when its
// last handle closes (never for a service: they outlive the daemon).
func Create(name string, killOnClose bool) (*Job, error) {
	var p *uint16
	if name != "" {
		var err error
		if p, err = global(name); err != nil {
			return nil, fmt.Errorf("create job %q: %w", name, err)
		}
	}
	h, err := windows.CreateJobObject(nil, p)
	if h == 0 {
		return nil, fmt.Errorf("create job %q: %w", name, err)
	}
	j := &Job{h: h, name: name}
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		if err := ownedByMe(h); err != nil {
			j.Close()
			return nil, fmt.Errorf("create job %q: %w", name, err)
		}
	}
	if killOnClose {
		info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
		if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			j.Close()
			return nil, fmt.Errorf("job %q: set kill on close: %w", name, err)
		}
	}
	return j, nil
}

// ownedByMe refuses a job this process's user does not own.
func ownedByMe(h windows.Handle) error {
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("read the owner of the job: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("read the owner of the job: %w", err)
	}
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("this process's user: %w", err)
	}
	if owner == nil || !owner.IsValid() {
		return nil // an object with no owner: Wine keeps none for jobs; Windows always sets one
	}
	if !windows.EqualSid(owner, me.User.Sid) {
		return fmt.Errorf("a job of that name exists and belongs to %s, not to this user (%s); refusing it", owner, me.User.Sid)
	}
	return nil
}

// Open opens the existing job called name (query, terminate and assign
// rights), in the global namespace, else (a job an earlier binky made) in
// this session's; an error wrapping errJobNotFound when there is none.
func Open(name string) (*Job, error) {
	if name == "" {
		return nil, fmt.Errorf("open job %q: a job is opened by name", name)
	}
	var last error
	for _, ns := range []func(string) (*uint16, error){global, local} {
		p, err := ns(name)
		if err != nil {
			return nil, fmt.Errorf("open job %q: %w", name, err)
		}
		r, _, e := procOpenJob.Call(jobAssign|jobQuery|jobTerminate|windows.SYNCHRONIZE|windows.READ_CONTROL, 0, uintptr(unsafe.Pointer(p)))
		if r == 0 {
			last = e
			if errors.Is(e, windows.ERROR_FILE_NOT_FOUND) {
				last = errJobNotFound
			}
			continue
		}
		if err := ownedByMe(windows.Handle(r)); err != nil {
			windows.CloseHandle(windows.Handle(r))
			return nil, fmt.Errorf("open job %q: %w", name, err)
		}
		return &Job{h: windows.Handle(r), name: name}, nil
	}
	return nil, fmt.Errorf("open job %q: %w", name, last)
}

// IsNotFound reports whether err says a job does not exist.
func IsNotFound(err error) bool { return errors.Is(err, errJobNotFound) }

// Name is the job's name ("" when unnamed).
func (j *Job) Name() string { return j.name }

// Close closes the handle (once).
func (j *Job) Close() {
	j.once.Do(func() { windows.CloseHandle(j.h) })
}

// Pids lists the processes in the job that have not exited.
func (j *Job) Pids() ([]int, error) {
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORD counts (one ULONG_PTR
	// on 64-bit Windows), then ULONG_PTR ids.
	n := 64
	for {
		buf := make([]uintptr, 1+n)
		err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf))*uint32(unsafe.Sizeof(buf[0])), nil)
		if err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
			return nil, fmt.Errorf("list processes of job %q: %w", j.name, err)
		}
		counts := (*[2]uint32)(unsafe.Pointer(&buf[0]))
		assigned, listed := int(counts[0]), int(min(counts[1], uint32(n)))
		if assigned > n {
			n = assigned + 16
			continue
		}
		out := make([]int, 0, listed)
		for _, p := range buf[1 : 1+listed] {
			out = append(out, int(p))
		}
		return out, nil
	}
}

// Empty reports whether the job has no live process (true when it cannot
// be read).
func (j *Job) Empty() bool {
	pids, err := j.Pids()
	return err != nil || len(pids) == 0
}

// Terminate ends every process in the job with exit code code.
func (j *Job) Terminate(code uint32) error {
	if err := windows.TerminateJobObject(j.h, code); err != nil {
		return fmt.Errorf("terminate job %q: %w", j.name, err)
	}
	return nil
}

// Start starts cmd (not started yet) inside the job: created suspended
// (CREATE_SUSPENDED, added to its creation flags), assigned, then resumed.
// It has run no instruction before it is in the job, so nothing it starts
// can escape it; os/exec has no job field and keeps the thread handle to
// itself, so the resume is NtResumeProcess, which resumes every thread of
// the process (it has one, the suspended first thread). When the job is
// named, the process also gets an inheritable handle to it (SYNCHRONIZE
// only): a name lives only while a handle is open, and this one keeps it
// while the process lives, so a restarted daemon can open the job by name.
// On failure the started process is killed and reaped.
func (j *Job) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := j.adopt(uint32(cmd.Process.Pid)); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	return nil
}

func (j *Job) adopt(pid uint32) error {
	// The process is our unreaped child, so its pid names it still.
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|
		windows.PROCESS_SUSPEND_RESUME|windows.PROCESS_DUP_HANDLE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("open new process %d: %w", pid, err)
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("put process %d in job %q: %w", pid, j.name, err)
	}
	if j.name != "" {
		var dup windows.Handle
		if err := windows.DuplicateHandle(windows.CurrentProcess(), j.h, p, &dup, windows.SYNCHRONIZE, true, 0); err != nil {
			return fmt.Errorf("hand job %q to process %d: %w", j.name, pid, err)
		}
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(p)); st != 0 {
		return fmt.Errorf("resume process %d: NTSTATUS %#x", pid, st)
	}
	return nil
}

// Run runs cmd (not started yet) in an unnamed job that kills on close, and
// waits for it: when it exits, whatever it started is ended at once (so no
// leftover holds its output open), and if the daemon dies first, the job
// dies with it. A cmd made by exec.CommandContext is cancelled by
// terminating the whole job. A parent job that forbids nesting (Windows
// before 8) does not stop the job's creation but its assignment
// (AssignProcessToJobObject fails): Run then returns that error, having
// killed the suspended process, and the command has not run. Only when no
// job can be created at all does cmd run as cmd.Run would.
func Run(cmd *exec.Cmd) error {
	j, err := Create("", true)
	if err != nil {
		return cmd.Run()
	}
	defer j.Close()
	if cmd.Cancel != nil { // set only by exec.CommandContext
		cmd.Cancel = func() error { return j.Terminate(1) }
	}
	if err := j.Start(cmd); err != nil {
		return err
	}
	// Our unreaped child: its pid names it until Wait.
	if h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(cmd.Process.Pid)); err == nil {
		windows.WaitForSingleObject(h, windows.INFINITE)
		windows.CloseHandle(h)
		j.Terminate(1) // the leftovers; the command's own exit code stays
	}
	return cmd.Wait()
}
