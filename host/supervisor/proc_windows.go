//go:build windows

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/cmdshell"
	"github.com/binkyhq/binky/host/internal/winjob"
)

// killSignal is what ends a service at once: its job is terminated.
const killSignal = syscall.SIGKILL

// ctrlBreak stands for CTRL_BREAK_EVENT, the one graceful stop Windows
// has for a console program: every stop_signal but SIGKILL means it.
const ctrlBreak = syscall.SIGTERM

// sysProcAttr runs command through cmd.exe /d /s /v:on /c with the command
// line as written, no console window and a process group of its own
// (host/cmdshell).
func sysProcAttr(command string) *syscall.SysProcAttr { return cmdshell.Attr(command) }

// shellArgs: Args[0] is cmd.exe's path; the command line itself is
// sysProcAttr's.
func shellArgs(command string) []string {
	return append([]string{cmdshell.Path()}, cmdshell.Args(command)[1:]...)
}

// ParseSignal accepts every name a binky.toml may hold (host/config), so a
// file that passes check also starts, and says what it means on Windows:
// SIGKILL (9) terminates the service's job at once; every other signal
// (TERM, INT, QUIT, HUP, USR1, USR2) is CTRL_BREAK_EVENT to the service's
// process group, then the job's termination after stop_timeout (ctrlBreak).
func ParseSignal(name string) (syscall.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG") {
	case "KILL", "9":
		return syscall.SIGKILL, nil
	case "TERM", "15", "INT", "2", "QUIT", "3", "HUP", "1", "USR1", "10", "USR2", "12":
		return ctrlBreak, nil
	}
	return 0, fmt.Errorf("stop signal %q: unknown signal (try SIGTERM or SIGINT)", name)
}

// signalGroup ends the process tree rooted at pgid (the leader's pid),
// descendants first, with TerminateProcess, whatever sig: the fallback for
// a run without a job (endGroup). The tree is read with creation times
// (processTree), so a pid reused by an unrelated process after its parent
// died is not taken for a child, unlike a parent-pid walk (taskkill /T).
func signalGroup(pgid int, _ syscall.Signal) error {
	tree, err := processTree(uint32(pgid))
	if err != nil {
		return fmt.Errorf("kill process tree %d: %w", pgid, err)
	}
	var errs []error
	for i := len(tree) - 1; i >= 0; i-- {
		if err := terminate(tree[i]); err != nil && alive(tree[i]) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("kill process tree %d: %w", pgid, errors.Join(errs...))
	}
	return nil
}

func terminate(pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.TerminateProcess(h, 1); err != nil {
		return fmt.Errorf("terminate process %d: %w", pid, err)
	}
	return nil
}

// alive reports whether pid names a process that has not exited (a process
// whose handle someone still holds exists after its exit, with an exit
// code).
func alive(pid uint32) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	return running(h)
}

func running(h windows.Handle) bool {
	var code uint32
	const stillActive = 259
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// signalPid ends one process at once: a console event goes to a group, not
// a process, so a stray found by its job is terminated.
func signalPid(pid int, _ syscall.Signal) error {
	if err := terminate(uint32(pid)); err != nil && alive(uint32(pid)) {
		return err
	}
	return nil
}

func exitSignal(*os.ProcessState) string { return "" }

// readStat is what Windows tells of pid: whether it still runs and its
// creation time (100 ns units since 1601), the start time a record keeps.
// Windows does not expose a process's group; binky's leaders lead their
// own (CREATE_NEW_PROCESS_GROUP), so Pgrp is the pid.
func readStat(pid int) (procStat, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return procStat{}, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		return procStat{}, fmt.Errorf("creation time of pid %d: %w", pid, err)
	}
	st := procStat{State: 'R', Pgrp: pid, StartTime: uint64(c.HighDateTime)<<32 | uint64(c.LowDateTime)}
	if !running(h) {
		st.State = 'Z'
	}
	return st, nil
}

// procStartTime is pid's creation time.
func procStartTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read start time of pid %d: %w", pid, err)
	}
	return st.StartTime, nil
}

// groupAlive reports whether the tree rooted at leader pgid still has its
// leader (the fallback view, without a job).
func groupAlive(pgid int) bool { return alive(uint32(pgid)) }

// markedProcesses lists the processes in the job of the service marked
// value (winjob.Name), except this process: on Windows a service's marker
// names its job, and every process it started is in it.
func markedProcesses(value string) []int {
	return jobPids(winjob.Name(value))
}

// markedPrefix lists the processes of every service job whose marker
// starts with prefix, except this process.
func markedPrefix(prefix string) []int {
	var out []int
	for _, pids := range markerValuesPids(prefix) {
		out = append(out, pids...)
	}
	return out
}

// markerValues maps each process of a job whose marker starts with prefix
// to that marker, except this process.
func markerValues(prefix string) map[int]string {
	out := map[int]string{}
	for m, pids := range markerValuesPids(prefix) {
		for _, p := range pids {
			out[p] = m
		}
	}
	return out
}

func markerValuesPids(prefix string) map[string][]int {
	names, _ := winjob.Names(prefix)
	out := map[string][]int{}
	for _, n := range names {
		if m, ok := winjob.MarkerOf(n); ok {
			out[m] = jobPids(n)
		}
	}
	return out
}

// jobPids lists the live processes of the job called name, except this
// process; none when there is no such job.
func jobPids(name string) []int {
	j, err := winjob.Open(name)
	if err != nil {
		return nil
	}
	defer j.Close()
	pids, _ := j.Pids()
	self := os.Getpid()
	out := pids[:0]
	for _, p := range pids {
		if p != self {
			out = append(out, p)
		}
	}
	return out
}

// adoptionSupported reports whether Adopt can verify and watch processes
// here: a process handle pins the pid, its creation time is the start
// time, and the job is reopened by name.
const adoptionSupported = true
