//go:build windows

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/internal/winjob"
)

var (
	ntdll            = windows.NewLazySystemDLL("ntdll.dll")
	ntSuspendProcess = ntdll.NewProc("NtSuspendProcess")
	ntResumeProcess  = ntdll.NewProc("NtResumeProcess")
)

// pauseService suspends (or resumes) every process in the service's job
// (winjob.Name of its marker): whatever the service started, however it
// was started, and nothing else. A process the job lists is suspended
// once; the list is read again until it holds no new process, so a child
// started while its parent was being suspended is caught too (a suspended
// process starts nothing). A process that exits meanwhile is no error.
// When the job cannot be opened or read (a service started by a binky
// before jobs), it falls back to the leader's process tree (pauseGroup).
func pauseService(key Key, pgid int, stop bool) error {
	j, err := winjob.Open(winjob.Name(key.Marker()))
	if err != nil {
		return pauseGroup(pgid, stop)
	}
	defer j.Close()
	done := map[int]bool{os.Getpid(): true}
	var errs []error
	for round := 0; round < pauseRounds; round++ {
		pids, err := j.Pids()
		if err != nil {
			if round == 0 {
				return pauseGroup(pgid, stop)
			}
			return errors.Join(append(errs, err)...)
		}
		fresh := 0
		for _, p := range pids {
			if done[p] {
				continue
			}
			done[p], fresh = true, fresh+1
			if err := pausePid(p, stop); err != nil && alive(uint32(p)) {
				errs = append(errs, err)
			}
		}
		if fresh == 0 || !stop {
			break
		}
	}
	return errors.Join(errs...)
}

// pauseRounds bounds how often pauseService reads a job's list again.
const pauseRounds = 8

// pauseGroup suspends (or resumes) the process tree rooted at pgid, the
// service's leader (cmd.exe): NtSuspendProcess stops every thread of each
// process where it stands, as SIGSTOP does on Unix. The tree is read from
// a process snapshot; a process counts as a child only when it was created
// after its parent, so a reused parent pid adopts no stranger.
func pauseGroup(pgid int, stop bool) error {
	pids, err := processTree(uint32(pgid))
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pids {
		if err := pausePid(int(p), stop); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pausePid suspends (or resumes) one process.
func pausePid(pid int, stop bool) error {
	h, err := windows.OpenProcess(windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	proc, verb := ntSuspendProcess, "suspend"
	if !stop {
		proc, verb = ntResumeProcess, "resume"
	}
	if st, _, _ := proc.Call(uintptr(h)); st != 0 {
		return fmt.Errorf("%s process %d: NTSTATUS %#x", verb, pid, st)
	}
	return nil
}

// processTree is root and its live descendants, root first.
func processTree(root uint32) ([]uint32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]uint32{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID != 0 && e.ProcessID != e.ParentProcessID {
			children[e.ParentProcessID] = append(children[e.ParentProcessID], e.ProcessID)
		}
	}
	out := []uint32{root}
	for i := 0; i < len(out); i++ {
		parentTime := creationTime(out[i])
		for _, c := range children[out[i]] {
			if ct := creationTime(c); ct != 0 && parentTime != 0 && ct >= parentTime {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// creationTime is a process's creation time (100ns since 1601), or 0 when
// it cannot be read.
func creationTime(pid uint32) int64 {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		return 0
	}
	return int64(c.HighDateTime)<<32 | int64(c.LowDateTime)
}
