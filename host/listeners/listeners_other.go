//go:build !linux

package listeners

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
)

// Listening cannot tell on this platform: it always returns an error
// wrapping errors.ErrUnsupported (so Check passes and Holder says "").
func Listening(int) ([]Socket, error) {
	return nil, fmt.Errorf("list listening sockets on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// listeningFor is Listening's answer: unsupported.
func listeningFor(addr netip.AddrPort) ([]Socket, error) { return Listening(int(addr.Port())) }

// Holders finds no holder on this platform.
func Holders(...uint64) map[uint64][]int { return map[uint64][]int{} }

// HoldersAmong finds no holder on this platform.
func HoldersAmong([]int, ...uint64) map[uint64][]int { return map[uint64][]int{} }

// CommandLine is "?" on this platform.
func CommandLine(int) string { return "?" }
