//go:build windows

package cmdshell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// Flags are the creation flags of every child binky starts on Windows: no
// console window, and a process group of its own so CTRL_BREAK_EVENT
// reaches it and not binky.
const Flags = windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP

// Path is cmd.exe: %ComSpec% when it names an existing file, else the one
// in the system directory.
func Path() string {
	if c := os.Getenv("ComSpec"); filepath.IsAbs(c) {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	if dir, err := windows.GetSystemDirectory(); err == nil {
		return filepath.Join(dir, "cmd.exe")
	}
	return `C:\Windows\System32\cmd.exe`
}

// Attr is the SysProcAttr that runs command through cmd.exe (see Line).
func Attr(command string) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CmdLine: Line(command), CreationFlags: Flags}
}

// Command is exec.CommandContext for command run by cmd.exe; the caller
// adds Dir, Env and the outputs. A cancelled ctx kills cmd.exe (callers
// that own a job end the whole job).
func Command(ctx context.Context, command string) *exec.Cmd {
	args := Args(command)
	cmd := exec.CommandContext(ctx, Path(), args[1:]...)
	cmd.SysProcAttr = Attr(command)
	return cmd
}
