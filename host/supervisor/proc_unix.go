//go:build unix

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// killSignal is what Stop sends once StopTimeout has passed.
const killSignal = syscall.SIGKILL

// sysProcAttr puts a service in a session (and so a process group) of its
// own. No Pdeathsig: a service outlives the daemon by design. (The command
// is for Windows, where it goes into the command line.)
func sysProcAttr(string) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

func shellArgs(command string) []string { return []string{"sh", "-c", command} }

// ParseSignal turns a stop_signal value ("SIGTERM", "TERM", "int", "15")
// into a signal.
func ParseSignal(name string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(name); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("stop signal %q: not a signal number", name)
		}
		return syscall.Signal(n), nil
	}
	s := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	if sig := unix.SignalNum(s); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("stop signal %q: unknown signal (try SIGTERM, SIGINT or SIGQUIT)", name)
}

// signalGroup sends sig to every process of group pgid. A group that is
// already gone is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if err := unix.Kill(-pgid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("signal process group %d with %s: %w", pgid, unix.SignalName(sig), err)
	}
	return nil
}

// signalPid sends sig to one process; a process already gone is not an error.
func signalPid(pid int, sig syscall.Signal) error {
	if err := unix.Kill(pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("signal pid %d with %s: %w", pid, unix.SignalName(sig), err)
	}
	return nil
}

// exitSignal names the signal that ended a process, or "".
func exitSignal(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return unix.SignalName(ws.Signal())
	}
	return ""
}
