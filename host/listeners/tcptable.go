package listeners

import (
	"encoding/binary"
	"net/netip"
)

// The connection tables Windows' GetExtendedTcpTable writes with
// TCP_TABLE_OWNER_PID_CONNECTIONS: a DWORD count of rows, then the rows.
// They are read here, on every platform, so that the reading is tested
// (and fuzzed) where the tests run; peer_windows.go asks for them.
//
// MIB_TCPROW_OWNER_PID (IPv4), 24 bytes: dwState, dwLocalAddr,
// dwLocalPort, dwRemoteAddr, dwRemotePort, dwOwningPid. MIB_TCP6ROW_OWNER_PID
// (IPv6), 56 bytes: ucLocalAddr[16], dwLocalScopeId, dwLocalPort,
// ucRemoteAddr[16], dwRemoteScopeId, dwRemotePort, dwState, dwOwningPid.
// Addresses are in network byte order; a port is in network byte order in
// the low 16 bits of its DWORD (the upper bytes may be anything); the
// other DWORDs are little-endian, as every Windows machine is.
const (
	tcpRow4Size = 24
	tcpRow6Size = 56
	// mibTCPStateTimeWait is a closed connection's row: no owner (pid 0).
	mibTCPStateTimeWait = 11
)

// ownerPID4 finds, in an IPv4 table, the connection whose local address is
// client and whose remote address is server, and returns its owning pid.
// Both must be IPv4. A table cut short is read as far as it goes.
func ownerPID4(b []byte, client, server netip.AddrPort) (pid uint32, ok bool) {
	rows, ok := tableRows(b, tcpRow4Size)
	if !ok {
		return 0, false
	}
	c, s := client.Addr().Unmap().As4(), server.Addr().Unmap().As4()
	for i := 0; i+tcpRow4Size <= len(rows); i += tcpRow4Size {
		r := rows[i : i+tcpRow4Size]
		if binary.LittleEndian.Uint32(r[0:]) == mibTCPStateTimeWait ||
			[4]byte(r[4:8]) != c || rowPort(r[8:]) != client.Port() ||
			[4]byte(r[12:16]) != s || rowPort(r[16:]) != server.Port() {
			continue
		}
		return binary.LittleEndian.Uint32(r[20:]), true
	}
	return 0, false
}

// ownerPID6 is ownerPID4 for an IPv6 table; an IPv4 client and server are
// looked for mapped (::ffff:a.b.c.d), as a dual-stack socket shows them.
func ownerPID6(b []byte, client, server netip.AddrPort) (pid uint32, ok bool) {
	rows, ok := tableRows(b, tcpRow6Size)
	if !ok {
		return 0, false
	}
	c, s := client.Addr().As16(), server.Addr().As16()
	for i := 0; i+tcpRow6Size <= len(rows); i += tcpRow6Size {
		r := rows[i : i+tcpRow6Size]
		if binary.LittleEndian.Uint32(r[48:]) == mibTCPStateTimeWait ||
			[16]byte(r[0:16]) != c || rowPort(r[20:]) != client.Port() ||
			[16]byte(r[24:40]) != s || rowPort(r[44:]) != server.Port() {
			continue
		}
		return binary.LittleEndian.Uint32(r[52:]), true
	}
	return 0, false
}

// tableRows is the rows part of a table: as many whole rows of size as its
// count says and b holds.
func tableRows(b []byte, size int) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	rows := b[4:]
	if whole := uint64(len(rows) / size); n > whole {
		n = whole
	}
	return rows[:n*uint64(size)], true
}

// rowPort reads a port DWORD: network byte order in its low 16 bits.
func rowPort(b []byte) uint16 { return binary.BigEndian.Uint16(b[:2]) }
