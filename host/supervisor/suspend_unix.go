//go:build unix

package supervisor

import "syscall"

func pauseGroup(pgid int, stop bool) error {
	if stop {
		return signalGroup(pgid, syscall.SIGSTOP)
	}
	return signalGroup(pgid, syscall.SIGCONT)
}

func pausePid(pid int, stop bool) error {
	if stop {
		return signalPid(pid, syscall.SIGSTOP)
	}
	return signalPid(pid, syscall.SIGCONT)
}
