//go:build !windows

package tunnel

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// setDetached puts the ssh in a process group of its own: the master it
// forks outlives a signal to the daemon's group, and is ended by -O exit.
func setDetached(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// endMaster ends the master ssh of pid, which this tunnel started: one
// whose control socket was lost can be told nothing by -O exit. Where
// /proc names the program, a pid that is no longer an ssh is left alone.
func endMaster(pid int) {
	if pid <= 0 {
		return
	}
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && strings.TrimSpace(string(comm)) != "ssh" {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
}
