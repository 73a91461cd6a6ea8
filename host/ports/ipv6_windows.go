//go:build windows

package ports

import (
	"errors"
	"syscall"
)

// Winsock error numbers for a host without IPv6.
const (
	wsaeafnosupport  = syscall.Errno(10047)
	wsaeaddrnotavail = syscall.Errno(10049)
)

// noIPv6 reports whether a bind on ::1 failed because the host has no IPv6,
// not because the port is held.
func noIPv6(err error) bool {
	return errors.Is(err, wsaeaddrnotavail) || errors.Is(err, wsaeafnosupport)
}
