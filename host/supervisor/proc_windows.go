//go:build windows

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

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

// ParseSignal accepts the names a binky.toml may hold; on Windows every stop
// ends in a forced kill of the process tree.
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
	}
	return 0, fmt.Errorf("stop signal %q: unknown signal (try SIGTERM or SIGINT)", name)
}

// signalGroup kills the process tree rooted at pgid (the leader's pid).
func signalGroup(pgid int, _ syscall.Signal) error {
	out, err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pgid)).CombinedOutput()
	if err != nil && groupAlive(pgid) {
		return fmt.Errorf("kill process tree %d: %w: %s", pgid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func signalPid(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func exitSignal(*os.ProcessState) string { return "" }

func readStat(int) (procStat, error) { return procStat{}, errNoProc }

func procStartTime(int) (uint64, error) { return 0, errNoProc }

func groupAlive(pgid int) bool {
	p, err := os.FindProcess(pgid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func groupMembers(int) []int { return nil }

func markedProcesses(string) []int { return nil }

func markedPrefix(string) []int { return nil }

func markerValues(string) map[int]string { return nil }

type pidWatch struct{}

func openPidWatch(int) (*pidWatch, error) { return nil, errNoProc }

func (*pidWatch) wait() error { return errNoProc }

func (*pidWatch) close() {}

const adoptionSupported = false
