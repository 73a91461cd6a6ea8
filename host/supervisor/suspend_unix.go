//go:build unix

package supervisor

import "syscall"

// pauseService stops (or continues) a service's process group.
func pauseService(_ Key, pgid int, stop bool) error { return pauseGroup(pgid, stop) }

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
