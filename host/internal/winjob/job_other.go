//go:build !windows

package winjob

import "os/exec"

// Run is cmd.Run: jobs are Windows'; Unix callers use process groups.
func Run(cmd *exec.Cmd) error { return cmd.Run() }
