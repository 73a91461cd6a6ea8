//go:build linux

package listeners

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"

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

// diagSock is the netlink socket every question of this process is put
// on, opened at the first and kept: a periodic health probe asks one
// question a service every few seconds, and opening, setting up and
// closing a socket for each cost more than the question itself. Questions
// take turns; each carries a sequence number of its own, and answers to
// another (a question that timed out) are skipped. A socket that failed
// is closed and opened afresh at the next question.
var diagSock struct {
	mu  sync.Mutex
	fd  int // -1: not open
	seq uint32
	buf []byte
}

func init() { diagSock.fd = -1 }

// diagExact is the listening socket that takes a connection to addr,
// asked of the kernel's own lookup (exactRequest): none when nothing
// listens there. An error means the question could not be put this way
// (an old kernel), and the caller dumps the port's listeners instead.
// Where sockets share the address (SO_REUSEPORT), it is the one the
// kernel picks for a connection without a source.
func diagExact(addr netip.AddrPort) ([]Socket, error) {
	diagSock.mu.Lock()
	defer diagSock.mu.Unlock()
	if err := diagOpen(); err != nil {
		return nil, err
	}
	diagSock.seq++
	seq := diagSock.seq
	if err := unix.Sendto(diagSock.fd, exactRequest(addr, seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		diagDrop()
		return nil, fmt.Errorf("send a sock_diag request: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(diagSock.fd, diagSock.buf, unix.MSG_TRUNC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil && n > len(diagSock.buf) {
			err = fmt.Errorf("%d bytes, more than %d", n, len(diagSock.buf))
		}
		if err != nil {
			diagDrop()
			return nil, fmt.Errorf("read the sock_diag reply: %w", err)
		}
		socks, done, err := parseExact(diagSock.buf[:n], seq, addr.Port())
		var de *diagError
		if err != nil && !errors.As(err, &de) {
			diagDrop()
		}
		if err != nil || done {
			return socks, err
		}
	}
}

// diagOpen opens diagSock's socket when it is not; with diagSock.mu held.
func diagOpen() error {
	if diagSock.fd >= 0 {
		return nil
	}
	fd, err := openDiag()
	if err != nil {
		return err
	}
	diagSock.fd = fd
	if diagSock.buf == nil {
		diagSock.buf = make([]byte, 32<<10)
	}
	return nil
}

// diagDrop closes diagSock's socket after it failed; the next question
// opens another. With diagSock.mu held.
func diagDrop() {
	if diagSock.fd >= 0 {
		unix.Close(diagSock.fd)
		diagSock.fd = -1
	}
}

// diagFamilies is diagListening for the given address families.
func diagFamilies(port int, families ...uint8) ([]Socket, error) {
	diagSock.mu.Lock()
	defer diagSock.mu.Unlock()
	if err := diagOpen(); err != nil {
		return nil, err
	}
	var out []Socket
	for _, family := range families {
		diagSock.seq++
		socks, err := diagAsk(diagSock.fd, diagSock.buf, family, uint16(port), diagSock.seq)
		var de *diagError
		switch {
		case err == nil:
			out = append(out, socks...)
		case family == afInet6 && errors.As(err, &de):
			// No IPv6 here: no IPv6 listeners.
		default:
			if !errors.As(err, &de) {
				// The socket itself failed (or timed out, an answer
				// perhaps still on its way): start the next afresh.
				diagDrop()
			}
			return nil, err
		}
	}
	return out, nil
}

// openDiag opens a NETLINK_SOCK_DIAG socket.
func openDiag() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("open a sock_diag socket: %w", err)
	}
	// A kernel that never answers must not hang a health probe.
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sock_diag socket timeout: %w", err)
	}
	return fd, nil
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
