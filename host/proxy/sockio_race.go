//go:build linux && race

package proxy

import (
	"errors"
	"syscall"
)

// rawRead and rawWrite go through package syscall under the race
// detector: its Read and Write tell the detector that what one goroutine
// wrote before sending is seen by the one that read it (a raw call would
// hide that edge and every test that hands data over a socket would
// report a race). Only the scheduling cost differs.
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errno(err)
}

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errno(err)
}

func errno(err error) syscall.Errno {
	var e syscall.Errno
	if err != nil && !errors.As(err, &e) {
		return syscall.EIO
	}
	return e
}
