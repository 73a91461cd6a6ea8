//go:build !linux && !windows

package listeners

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
)

// PeerUID cannot tell on this platform: it returns an error wrapping
// errors.ErrUnsupported.
func PeerUID(netip.AddrPort, netip.AddrPort) (int, error) {
	return -1, fmt.Errorf("find the owner of a connection on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// PeerOf cannot tell on this platform: it returns an error wrapping
// errors.ErrUnsupported.
func PeerOf(netip.AddrPort, netip.AddrPort) (Peer, error) {
	return Peer{}, fmt.Errorf("find the owner of a connection on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
