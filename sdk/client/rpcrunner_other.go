//go:build !windows

package client

import (
	"os/exec"

	"github.com/hashicorp/go-plugin"
)

// startIn hands cmd to go-plugin, which starts it (in the process group
// ownGroup gave it); jobs are Windows' (rpcrunner_windows.go).
func startIn(cfg *plugin.ClientConfig, cmd *exec.Cmd, _ *job, _ string) { cfg.Cmd = cmd }
