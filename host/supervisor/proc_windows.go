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
)

const killSignal = syscall.SIGKILL

var errNoProc = fmt.Errorf("process start times, process groups and pidfd are not supported on windows: %w", errors.ErrUnsupported)

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
// file that passes check also starts; on Windows every stop ends in a forced
// kill of the process tree (docs/windows.md), and SIGUSR1 and SIGUSR2, which
// Windows has no meaning for, are taken as SIGTERM.
func ParseSignal(name string) (syscall.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG") {
	case "TERM", "15":
		return syscall.SIGTERM, nil
	case "INT", "2":
		return syscall.SIGINT, nil
	case "KILL", "9":
		return syscall.SIGKILL, nil
	case "QUIT", "3":
		return syscall.SIGQUIT, nil
	case "HUP", "1":
		return syscall.SIGHUP, nil
	case "USR1", "10", "USR2", "12":
		return syscall.SIGTERM, nil
	}
	return 0, fmt.Errorf("stop signal %q: unknown signal (try SIGTERM or SIGINT)", name)
}

// signalGroup ends the process tree rooted at pgid (the leader's pid),
// descendants first, with TerminateProcess. Every stop on Windows is a
// forced one until graceful stops are built (docs/windows.md). The tree is
// read with creation times (processTree), so a pid reused by an unrelated
// process after its parent died is not taken for a child, unlike a
// parent-pid walk (taskkill /T).
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
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}

func signalPid(pid int, _ syscall.Signal) error {
	if err := terminate(uint32(pid)); err != nil && alive(uint32(pid)) {
		return err
	}
	return nil
}

func exitSignal(*os.ProcessState) string { return "" }

func readStat(int) (procStat, error) { return procStat{}, errNoProc }

func procStartTime(int) (uint64, error) { return 0, errNoProc }

func groupAlive(pgid int) bool { return alive(uint32(pgid)) }

func groupMembers(int) []int { return nil }

func markedProcesses(string) []int { return nil }

func markedPrefix(string) []int { return nil }

func markerValues(string) map[int]string { return nil }

type pidWatch struct{}

func openPidWatch(int) (*pidWatch, error) { return nil, errNoProc }

func (*pidWatch) wait() error { return errNoProc }

func (*pidWatch) close() {}

const adoptionSupported = false
