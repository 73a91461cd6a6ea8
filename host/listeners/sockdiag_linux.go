//go:build linux

package listeners

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"golang.org/x/sys/unix"
)

// diagListening asks the kernel, over a NETLINK_SOCK_DIAG socket, for the
// listening TCP sockets on port (every port when 0), IPv4 then IPv6: the
// kernel filters them, so the cost does not grow with the sockets of the
// machine. An error means the question could not be put this way (no
// netlink here: a sandbox, a kernel without inet_diag), and the caller
// reads /proc/net/tcp instead. An IPv6 question the kernel refuses (no
// IPv6 here) is not an error.
func diagListening(port int) ([]Socket, error) {
	return diagFamilies(port, afInet, afInet6)
}

// diagAnswering is the listening sockets that may take a connection to
// addr, asked of the kernel with as few questions as it can: for an IPv4
// address, the IPv4 sockets first, and the IPv6 ones (a wildcard :: takes
// IPv4 too) only when no IPv4 socket is bound to that very address; for
// an IPv6 address, the IPv6 sockets only.
func diagAnswering(addr netip.AddrPort) ([]Socket, error) {
	a := addr.Addr().Unmap().WithZone("")
	if !a.Is4() {
		return diagFamilies(int(addr.Port()), afInet6)
	}
	v4, err := diagFamilies(int(addr.Port()), afInet)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(v4, func(s Socket) bool { return s.Addr.Addr() == a }) {
		return v4, nil
	}
	v6, err := diagFamilies(int(addr.Port()), afInet6)
	if err != nil {
		return nil, err
	}
	return append(v4, v6...), nil
}

// diagFamilies is diagListening for the given address families.
func diagFamilies(port int, families ...uint8) ([]Socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("open a sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	// A kernel that never answers must not hang a health probe.
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2}); err != nil {
		return nil, fmt.Errorf("sock_diag socket timeout: %w", err)
	}
	var out []Socket
	buf := make([]byte, 32<<10)
	for seq, family := range families {
		socks, err := diagAsk(fd, buf, family, uint16(port), uint32(seq+1))
		var de *diagError
		switch {
		case err == nil:
			out = append(out, socks...)
		case family == afInet6 && errors.As(err, &de):
			// No IPv6 here: no IPv6 listeners.
		default:
			return nil, err
		}
	}
	return out, nil
}

// diagAsk sends one request and reads its replies up to NLMSG_DONE.
func diagAsk(fd int, buf []byte, family uint8, port uint16, seq uint32) ([]Socket, error) {
	if err := unix.Sendto(fd, diagRequest(family, port, seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("send a sock_diag request: %w", err)
	}
	var out []Socket
	for {
		// MSG_TRUNC: n is the datagram's whole length, even past buf.
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the sock_diag reply: %w", err)
		}
		if n > len(buf) {
			return nil, fmt.Errorf("read the sock_diag reply: %d bytes, more than %d", n, len(buf))
		}
		socks, done, err := parseDiag(buf[:n], seq, port)
		if err != nil {
			return nil, err
		}
		out = append(out, socks...)
		if done {
			return out, nil
		}
	}
}
