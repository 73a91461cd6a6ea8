//go:build windows

package daemon

import "os/exec"

func shellPath() string { return "cmd" }
func shellFlag() string { return "/C" }

// groupHook: on Windows the hook is ended through its process alone.
func groupHook(cmd *exec.Cmd) {}
