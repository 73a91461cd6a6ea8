//go:build !windows

package ports

import (
	"errors"
	"syscall"
)

// noIPv6 reports whether a bind on ::1 failed because the host has no IPv6
// (no loopback address, or no IPv6 support at all), not because the port is
// held.
func noIPv6(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) ||
		errors.Is(err, syscall.EAFNOSUPPORT) ||
		errors.Is(err, syscall.EPROTONOSUPPORT)
}
