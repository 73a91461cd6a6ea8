//go:build !unix

package client

import "os/exec"

// ownGroup is a no-op where there are no Unix process groups (Windows): only
// the adapter process itself is killed on a timeout.
func ownGroup(*exec.Cmd) {}

// killGroup kills the adapter process if it still runs. Children it left
// behind are not reached on Windows.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
}
