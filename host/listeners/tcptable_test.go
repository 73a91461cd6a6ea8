package listeners

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// row4 is one MIB_TCPROW_OWNER_PID as Windows writes it.
func row4(state uint32, local, remote netip.AddrPort, pid uint32) []byte {
	b := make([]byte, tcpRow4Size)
	binary.LittleEndian.PutUint32(b[0:], state)
	l, r := local.Addr().As4(), remote.Addr().As4()
	copy(b[4:], l[:])
	binary.BigEndian.PutUint16(b[8:], local.Port())
	b[10], b[11] = 0xAA, 0xBB // the upper bytes of a port may be anything
	copy(b[12:], r[:])
	binary.BigEndian.PutUint16(b[16:], remote.Port())
	binary.LittleEndian.PutUint32(b[20:], pid)
	return b
}

// row6 is one MIB_TCP6ROW_OWNER_PID.
func row6(state uint32, local, remote netip.AddrPort, pid uint32) []byte {
	b := make([]byte, tcpRow6Size)
	l, r := local.Addr().As16(), remote.Addr().As16()
	copy(b[0:], l[:])
	binary.BigEndian.PutUint16(b[20:], local.Port())
	copy(b[24:], r[:])
	binary.BigEndian.PutUint16(b[44:], remote.Port())
	binary.LittleEndian.PutUint32(b[48:], state)
	binary.LittleEndian.PutUint32(b[52:], pid)
	return b
}

func table(count uint32, rows ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, count)
	for _, r := range rows {
		b = append(b, r...)
	}
	return b
}

func TestOwnerPIDTables(t *testing.T) {
	t.Parallel()
	ap := netip.MustParseAddrPort
	proxy, client := ap("127.0.0.1:7355"), ap("127.0.0.1:50000")
	const established = 5
	t4 := table(4,
		row4(established, proxy, client, 100),       // the proxy's end
		row4(mibTCPStateTimeWait, client, proxy, 0), // an earlier connection, closed
		row4(established, ap("127.0.0.1:50001"), proxy, 300),
		row4(established, client, proxy, 200), // the client's end
	)
	if pid, ok := ownerPID4(t4, client, proxy); !ok || pid != 200 {
		t.Errorf("ownerPID4(client) = %d, %v; want 200", pid, ok)
	}
	if pid, ok := ownerPID4(t4[:len(t4)-1], client, proxy); ok {
		t.Errorf("ownerPID4 of a table cut inside the row = %d; want not found", pid)
	}
	if pid, ok := ownerPID4(table(3, t4[4:]), client, proxy); ok {
		t.Errorf("ownerPID4 past the table's count = %d; want not found", pid)
	}
	if _, ok := ownerPID4(t4, ap("127.0.0.1:50002"), proxy); ok {
		t.Error("ownerPID4 found a client port no row has")
	}

	p6, c6 := ap("[::1]:7355"), ap("[::1]:50000")
	t6 := table(3,
		row6(established, p6, c6, 100),
		row6(established, c6, p6, 200),
		row6(established, ap("[::ffff:127.0.0.1]:50000"), ap("[::ffff:127.0.0.1]:7355"), 300),
	)
	if pid, ok := ownerPID6(t6, c6, p6); !ok || pid != 200 {
		t.Errorf("ownerPID6(::1 client) = %d, %v; want 200", pid, ok)
	}
	if pid, ok := ownerPID6(t6, client, proxy); !ok || pid != 300 {
		t.Errorf("ownerPID6(127.0.0.1 client, mapped) = %d, %v; want 300", pid, ok)
	}
	for _, b := range [][]byte{nil, {1, 0}, table(1000)} {
		if _, ok := ownerPID6(b, c6, p6); ok {
			t.Errorf("ownerPID6(%v) found a row", b)
		}
	}
}

// FuzzOwnerPID: any bytes, as a table of either family, are read without
// a panic, and a pid found is that of a row holding the addresses asked.
func FuzzOwnerPID(f *testing.F) {
	ap := netip.MustParseAddrPort
	f.Add(table(1, row4(5, ap("127.0.0.1:50000"), ap("127.0.0.1:7355"), 7)), uint16(50000))
	f.Add(table(1, row6(5, ap("[::ffff:127.0.0.1]:50000"), ap("[::ffff:127.0.0.1]:7355"), 7)), uint16(50000))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, port uint16) {
		client := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
		server := ap("127.0.0.1:7355")
		if pid, ok := ownerPID4(b, client, server); ok {
			rows, _ := tableRows(b, tcpRow4Size)
			if !containsRow(rows, tcpRow4Size, func(r []byte) bool {
				return binary.LittleEndian.Uint32(r[20:]) == pid && rowPort(r[8:]) == port && rowPort(r[16:]) == 7355
			}) {
				t.Fatalf("ownerPID4 = %d, but no row of the table has it for port %d", pid, port)
			}
		}
		if pid, ok := ownerPID6(b, client, server); ok {
			rows, _ := tableRows(b, tcpRow6Size)
			if !containsRow(rows, tcpRow6Size, func(r []byte) bool {
				return binary.LittleEndian.Uint32(r[52:]) == pid && rowPort(r[20:]) == port && rowPort(r[44:]) == 7355
			}) {
				t.Fatalf("ownerPID6 = %d, but no row of the table has it for port %d", pid, port)
			}
		}
	})
}

func containsRow(rows []byte, size int, match func([]byte) bool) bool {
	for i := 0; i+size <= len(rows); i += size {
		if match(rows[i : i+size]) {
			return true
		}
	}
	return false
}
