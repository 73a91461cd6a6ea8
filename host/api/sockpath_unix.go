//go:build !windows

package api

import (
	"errors"
	"fmt"
	"syscall"
)

// maxSocketPath is the longest path a Unix socket takes: sun_path holds
// 108 bytes on Linux (104 on the BSDs and macOS), its NUL included.
const maxSocketPath = 107

// socketPathError explains err, from listening on or dialing the socket
// at sock, when the path is too long for a Unix socket: the kernel says
// only "invalid argument".
func socketPathError(sock string, err error) error {
	if len(sock) <= maxSocketPath-4 || !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return fmt.Errorf("%s is %d bytes, longer than a Unix socket's path may be (%d on Linux): use a shorter BINKY_HOME: %w", sock, len(sock), maxSocketPath, err)
}
