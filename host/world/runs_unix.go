//go:build !windows

package world

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/binkyhq/binky/host/supervisor"
)

// supervisedRuns says binky run's commands outlive the daemon here.
const supervisedRuns = true

// runWrapper runs "$@" and writes its exit status to $0, with builtins
// only: no mv to fork between the command's end and the wrapper's, which
// is when its job place goes back. The line ends in a newline; a reader
// that finds none (the wrapper was between its open and its write) reads
// it as not written yet (runEnded).
const runWrapper = `"$@"; c=$?; printf '%s\n' "$c" > "$0"; exit "$c"`

func shellArgv(command string) []string { return []string{"sh", "-c", command} }

// startRun starts argv in dir with env, in a process group of its own,
// its output appended to the files stdout and stderr and its stdin empty,
// through the wrapper that records its exit status in exitPath. It does
// not die with the daemon. wait closes once the daemon reaped it.
func startRun(dir string, env, argv []string, exitPath, stdout, stderr string) (int, <-chan struct{}, error) {
	open := func(p string) (*os.File, error) {
		return os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	so, err := open(stdout)
	if err != nil {
		return 0, nil, fmt.Errorf("run output file: %w", err)
	}
	defer so.Close()
	se, err := open(stderr)
	if err != nil {
		return 0, nil, fmt.Errorf("run output file: %w", err)
	}
	defer se.Close()
	cmd := exec.Command("sh", append([]string{"-c", runWrapper, exitPath}, argv...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = so, se
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	wait := make(chan struct{})
	go func() { cmd.Wait(); close(wait) }()
	return cmd.Process.Pid, wait, nil
}

// killRun ends a run's process group (its wrapper leads it).
func killRun(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// runAlive reports whether a run's wrapper pid, or a process with its
// marker (Linux reads markers), is still alive.
func runAlive(pid int, marker string) bool {
	if runtime.GOOS == "linux" {
		return len(supervisor.MarkedProcesses(marker)) > 0
	}
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
