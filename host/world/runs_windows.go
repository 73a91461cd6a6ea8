//go:build windows

package world

import "errors"

// supervisedRuns: on Windows a run's command is in a kill-on-close job
// (winjob.Run) and dies with the daemon; it is not journaled yet.
const supervisedRuns = false

func shellArgv(command string) []string { return []string{"cmd.exe", "/d", "/s", "/c", command} }

func startRun(dir string, env, argv []string, exitPath, stdout, stderr string) (int, <-chan struct{}, error) {
	return 0, nil, errors.New("journaled runs are not supported on Windows")
}

func killRun(pid int) {}

func runAlive(pid int, marker string) bool { return false }
