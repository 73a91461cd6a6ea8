//go:build unix

package mcp

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ProtocolOutput takes the process's stdout for the protocol alone: it
// returns a private duplicate of file descriptor 1 and points descriptor 1
// itself at stderr, so anything else that writes to stdout — a library's
// stray print, a child process inheriting it — lands on stderr instead of
// corrupting the JSON-RPC stream. Call it once, before serving.
func ProtocolOutput() (*os.File, error) {
	fd, err := unix.Dup(int(os.Stdout.Fd()))
	if err != nil {
		return nil, fmt.Errorf("duplicate stdout for the protocol: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(int(os.Stderr.Fd()), int(os.Stdout.Fd())); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("point stdout at stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "mcp-protocol"), nil
}
