package daemon

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// unreadBytes is how many bytes wait, unread, in c's receive queue
// (SIOCINQ, which Linux spells TIOCINQ for every socket).
func unreadBytes(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatalf("SIOCINQ: %v", ierr)
	}
	return n
}
