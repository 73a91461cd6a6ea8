//go:build windows

package listeners

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	iphlpapi                = windows.NewLazySystemDLL("iphlpapi.dll")
	procGetExtendedTcpTable = iphlpapi.NewProc("GetExtendedTcpTable")
)

// tcpTableOwnerPIDConnections is TCP_TABLE_OWNER_PID_CONNECTIONS: every
// connection that is not listening, with its owning pid.
const tcpTableOwnerPIDConnections = 4

// PeerUID cannot tell on Windows, which has no uids: PeerOf compares the
// users themselves. It returns an error wrapping errors.ErrUnsupported.
func PeerUID(netip.AddrPort, netip.AddrPort) (int, error) {
	return -1, fmt.Errorf("find the uid of a connection's client on windows: %w", errors.ErrUnsupported)
}

// PeerOf tells whether the client end of the TCP connection from client to
// server, both sockets of this host, is held by this process's user: the
// connection's owning process (GetExtendedTcpTable) runs as the user of
// this process's token. A process whose token this user may not read (a
// service, another user's elevated process) is an error, so not Mine.
func PeerOf(client, server netip.AddrPort) (Peer, error) {
	pid, err := ownerPID(client, server)
	if err != nil {
		return Peer{}, err
	}
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return Peer{}, fmt.Errorf("read this process's user: %w", err)
	}
	if pid == windows.GetCurrentProcessId() {
		return Peer{Mine: true, User: me.User.Sid.String()}, nil
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return Peer{}, fmt.Errorf("open pid %d, the client of %s -> %s: %w", pid, client, server, err)
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return Peer{}, fmt.Errorf("open the token of pid %d, the client of %s -> %s: %w", pid, client, server, err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return Peer{}, fmt.Errorf("read the user of pid %d, the client of %s -> %s: %w", pid, client, server, err)
	}
	return Peer{Mine: tu.User.Sid.Equals(me.User.Sid), User: tu.User.Sid.String()}, nil
}

// ownerPID is the pid owning the connection whose local address is client
// and whose remote address is server: looked up in the IPv4 table, then in
// the IPv6 one (a dual-stack socket shows an IPv4 connection there,
// mapped).
func ownerPID(client, server netip.AddrPort) (uint32, error) {
	c, s := client.Addr().Unmap().WithZone(""), server.Addr().Unmap().WithZone("")
	if !c.IsValid() || !s.IsValid() || c.Is4() != s.Is4() {
		return 0, fmt.Errorf("find the owner of %s -> %s: %w", client, server, ErrNoPeer)
	}
	client, server = netip.AddrPortFrom(c, client.Port()), netip.AddrPortFrom(s, server.Port())
	if c.Is4() {
		b, err := tcpTable(windows.AF_INET)
		if err != nil {
			return 0, fmt.Errorf("find the owner of %s -> %s: %w", client, server, err)
		}
		if pid, ok := ownerPID4(b, client, server); ok {
			return pid, nil
		}
	}
	b, err := tcpTable(windows.AF_INET6)
	if err != nil {
		return 0, fmt.Errorf("find the owner of %s -> %s: %w", client, server, err)
	}
	if pid, ok := ownerPID6(b, client, server); ok {
		return pid, nil
	}
	return 0, fmt.Errorf("find the owner of %s -> %s: %w", client, server, ErrNoPeer)
}

// tcpTable is GetExtendedTcpTable's connection table for family af
// (AF_INET or AF_INET6), grown until it fits.
func tcpTable(af uint32) ([]byte, error) {
	if err := procGetExtendedTcpTable.Find(); err != nil {
		return nil, fmt.Errorf("read the tcp table: %w", err)
	}
	size := uint32(16 << 10)
	for range 5 {
		buf := make([]byte, size)
		r, _, _ := procGetExtendedTcpTable.Call(
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)),
			0, uintptr(af), tcpTableOwnerPIDConnections, 0)
		switch e := syscall.Errno(r); e {
		case 0:
			return buf, nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			size += size / 4 // it may grow again before the next call
		default:
			return nil, fmt.Errorf("read the tcp table: GetExtendedTcpTable: %w", e)
		}
	}
	return nil, fmt.Errorf("read the tcp table: GetExtendedTcpTable: it kept growing past %d bytes", size)
}
