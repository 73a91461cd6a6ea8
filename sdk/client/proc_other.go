//go:build !unix

package client

import "os/exec"

// ownGroup is a no-op where there are no Unix process groups (Windows,
// where the adapter's job does that work: job_windows.go).
func ownGroup(*exec.Cmd) {}

// killGroup kills the adapter process if it still runs. Children it left
// behind are ended on Windows by terminating its job (job.kill).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
}
