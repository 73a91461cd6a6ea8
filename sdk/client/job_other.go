//go:build !windows

package client

import "os/exec"

// job is Windows' containment (job_windows.go); elsewhere the adapter's
// process group does its work (proc_unix.go) and a job is always nil.
type job struct{}

func newJob() *job { return nil }

func (*job) start(cmd *exec.Cmd) error { return cmd.Start() }

// startAgain: a failed start elsewhere is final (job_windows.go says when
// it is not on Windows).
func startAgain(error) bool { return false }

func (*job) kill() {}

func (*job) close() {}
