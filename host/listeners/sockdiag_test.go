package listeners

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"testing"
)

// nlMsg is one netlink message as the kernel writes it: header, payload,
// padding to 4 bytes.
func nlMsg(typ, flags uint16, seq uint32, payload []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(nlmsgHdrLen+len(payload)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = binary.NativeEndian.AppendUint16(b, flags)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 4242) // port id
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// diagMsg is one SOCK_DIAG_BY_FAMILY reply: a struct inet_diag_msg for the
// socket at addr, and an attribute after it, as the kernel may add.
func diagMsg(seq uint32, family, state uint8, addr netip.AddrPort, uid, inode uint32) []byte {
	m := make([]byte, inetDiagMsgLen, inetDiagMsgLen+8)
	m[0], m[1] = family, state
	binary.BigEndian.PutUint16(m[4:], addr.Port())
	if family == afInet {
		a := addr.Addr().As4()
		copy(m[8:], a[:])
	} else {
		a := addr.Addr().As16()
		copy(m[8:], a[:])
	}
	binary.NativeEndian.PutUint32(m[64:], uid)
	binary.NativeEndian.PutUint32(m[68:], inode)
	m = append(m, 8, 0, 6, 0, 1, 2, 3, 4) // INET_DIAG_SHUTDOWN-like attribute
	return nlMsg(sockDiagByFamily, nlmFDump>>8, seq, m)
}

func doneMsg(seq uint32) []byte { return nlMsg(nlmsgDone, 0, seq, []byte{0, 0, 0, 0}) }

func errorMsg(seq uint32, errno int32) []byte {
	return nlMsg(nlmsgError, 0, seq, binary.NativeEndian.AppendUint32(nil, uint32(-errno)))
}

func TestDiagRequest(t *testing.T) {
	t.Parallel()
	b := diagRequest(afInet6, 8080, 7)
	ne := binary.NativeEndian
	if got := int(ne.Uint32(b)); got != len(b) || got != nlmsgHdrLen+inetDiagReqLen+nlaHdrLen+16 {
		t.Fatalf("length field %d, message %d bytes; want both %d", got, len(b), nlmsgHdrLen+inetDiagReqLen+nlaHdrLen+16)
	}
	if typ, flags, seq := ne.Uint16(b[4:]), ne.Uint16(b[6:]), ne.Uint32(b[8:]); typ != sockDiagByFamily || flags != nlmFRequest|nlmFDump || seq != 7 {
		t.Errorf("header type %d flags %#x seq %d; want %d %#x 7", typ, flags, seq, sockDiagByFamily, nlmFRequest|nlmFDump)
	}
	req := b[nlmsgHdrLen:]
	if req[0] != afInet6 || req[1] != ipprotoTCP || ne.Uint32(req[4:]) != 1<<tcpStateListen || binary.BigEndian.Uint16(req[8:]) != 8080 {
		t.Errorf("inet_diag_req_v2 = % x; want family %d, TCP, LISTEN, source port 8080", req[:12], afInet6)
	}
	attr := req[inetDiagReqLen:]
	if ne.Uint16(attr) != nlaHdrLen+16 || ne.Uint16(attr[2:]) != inetDiagReqBytecode {
		t.Errorf("attribute header % x; want length 20, INET_DIAG_REQ_BYTECODE", attr[:4])
	}
	type op struct {
		code, yes uint8
		no        uint16
	}
	var ops []op
	for bc := attr[nlaHdrLen:]; len(bc) >= 4; bc = bc[4:] {
		ops = append(ops, op{bc[0], bc[1], ne.Uint16(bc[2:])})
	}
	want := []op{{inetDiagBCSGE, 8, 20}, {0, 0, 8080}, {inetDiagBCSLE, 8, 12}, {0, 0, 8080}}
	if !slices.Equal(ops, want) {
		t.Errorf("bytecode %v; want %v", ops, want)
	}
	if all := diagRequest(afInet, 0, 1); len(all) != nlmsgHdrLen+inetDiagReqLen || int(ne.Uint32(all)) != len(all) {
		t.Errorf("the every-port request is %d bytes (length field %d); want %d, no filter", len(all), ne.Uint32(all), nlmsgHdrLen+inetDiagReqLen)
	}
}

func TestParseDiag(t *testing.T) {
	t.Parallel()
	ap := netip.MustParseAddrPort
	const seq = 3
	datagram := slices.Concat(
		diagMsg(seq, afInet, tcpStateListen, ap("127.0.0.1:8080"), 1000, 11),
		diagMsg(seq, afInet6, tcpStateListen, ap("[::ffff:127.0.0.2]:8080"), 0, 12), // mapped: unmapped
		diagMsg(seq, afInet6, tcpStateListen, ap("[::]:8080"), 1001, 13),
		diagMsg(seq, afInet, 1, ap("127.0.0.1:8080"), 1000, 14),                // established: skipped
		diagMsg(seq, afInet, tcpStateListen, ap("127.0.0.1:8081"), 1000, 15),   // another port
		diagMsg(seq, afInet, tcpStateListen, ap("127.0.0.1:8080"), 1000, 0),    // no inode
		diagMsg(seq+1, afInet, tcpStateListen, ap("127.0.0.1:8080"), 1000, 16), // a stale answer
		doneMsg(seq),
	)
	socks, done, err := parseDiag(datagram, seq, 8080)
	want := []Socket{
		{Addr: ap("127.0.0.1:8080"), UID: 1000, Inode: 11},
		{Addr: ap("127.0.0.2:8080"), UID: 0, Inode: 12},
		{Addr: ap("[::]:8080"), UID: 1001, Inode: 13},
	}
	if err != nil || !done || !slices.Equal(socks, want) {
		t.Errorf("parseDiag = %v, done %v, %v; want %v, done, nil", socks, done, err, want)
	}
	if socks, done, err := parseDiag(datagram[:len(datagram)-len(doneMsg(seq))], seq, 0); err != nil || done || len(socks) != 4 {
		t.Errorf("parseDiag(no NLMSG_DONE yet, any port) = %v, done %v, %v; want 4 sockets, not done", socks, done, err)
	}

	var de *diagError
	if _, _, err := parseDiag(errorMsg(seq, 22), seq, 0); !errors.As(err, &de) || de.errno != 22 {
		t.Errorf("parseDiag(NLMSG_ERROR EINVAL) = %v; want a diagError with errno 22", err)
	}
	if _, done, err := parseDiag(errorMsg(seq, 0), seq, 0); err != nil || !done {
		t.Errorf("parseDiag(an acknowledgement) = done %v, %v; want done", done, err)
	}
	intr := nlMsg(sockDiagByFamily, nlmFDumpIntr, seq, make([]byte, inetDiagMsgLen))
	if _, _, err := parseDiag(intr, seq, 0); !errors.Is(err, errDumpInterrupted) {
		t.Errorf("parseDiag(NLM_F_DUMP_INTR) = %v; want errDumpInterrupted", err)
	}
	for name, bad := range map[string][]byte{
		"short header":       datagram[:10],
		"length past end":    datagram[:50],
		"length below 16":    {4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0},
		"error without code": nlMsg(nlmsgError, 0, seq, nil),
	} {
		if bad[0] == 4 && binary.NativeEndian.Uint32(bad) != 4 {
			continue // a big-endian host reads this length otherwise
		}
		if _, done, err := parseDiag(bad, seq, 0); err == nil || done {
			t.Errorf("parseDiag(%s) = done %v, %v; want an error", name, done, err)
		}
	}
}

// FuzzParseDiag: no reply makes the parser fail other than by an error,
// and what it returns is a listening socket on the port asked for, with
// an inode.
func FuzzParseDiag(f *testing.F) {
	ap := netip.MustParseAddrPort
	f.Add(slices.Concat(diagMsg(1, afInet, tcpStateListen, ap("127.0.0.1:8080"), 1000, 11), doneMsg(1)), uint32(1), uint16(8080))
	f.Add(diagMsg(2, afInet6, tcpStateListen, ap("[::1]:443"), 0, 12), uint32(2), uint16(0))
	f.Add(errorMsg(1, 2), uint32(1), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, seq uint32, port uint16) {
		socks, _, _ := parseDiag(b, seq, port)
		for _, s := range socks {
			if s.Inode == 0 || port != 0 && s.Addr.Port() != port || !s.Addr.Addr().IsValid() || s.Addr.Addr().Is4In6() {
				t.Errorf("parseDiag gave %+v for port %d", s, port)
			}
		}
	})
}

// TestExactRequest: the lookup's request is a header and an
// inet_diag_req_v2 naming the address as the source, with no cookie.
func TestExactRequest(t *testing.T) {
	b := exactRequest(netip.MustParseAddrPort("127.0.0.1:8080"), 9)
	if len(b) != nlmsgHdrLen+inetDiagReqLen || binary.NativeEndian.Uint32(b) != uint32(len(b)) {
		t.Fatalf("request of %d bytes says %d", len(b), binary.NativeEndian.Uint32(b))
	}
	if flags := binary.NativeEndian.Uint16(b[6:]); flags != nlmFRequest {
		t.Errorf("flags %#x; want a request, not a dump", flags)
	}
	r := b[nlmsgHdrLen:]
	if r[0] != afInet || binary.BigEndian.Uint16(r[8:]) != 8080 || string(r[12:16]) != "\x7f\x00\x00\x01" {
		t.Errorf("request body %x", r)
	}
	if binary.NativeEndian.Uint32(r[48:]) != ^uint32(0) || binary.NativeEndian.Uint32(r[52:]) != ^uint32(0) {
		t.Errorf("cookie %x; want INET_DIAG_NOCOOKIE", r[48:])
	}
	if r6 := exactRequest(netip.MustParseAddrPort("[::ffff:127.0.0.1]:1"), 1)[nlmsgHdrLen:]; r6[0] != afInet {
		t.Errorf("a v4-mapped address is asked as family %d; want IPv4", r6[0])
	}
	if r6 := exactRequest(netip.MustParseAddrPort("[::1]:1"), 1)[nlmsgHdrLen:]; r6[0] != afInet6 || r6[12+15] != 1 {
		t.Errorf("::1 asked as %x", r6)
	}
}

// TestParseExact: the answer is the socket, ENOENT none; another
// sequence's messages are skipped; a refusal is an error.
func TestParseExact(t *testing.T) {
	ap := netip.MustParseAddrPort
	socks, done, err := parseExact(slices.Concat(errorMsg(3, 2), diagMsg(4, afInet, tcpStateListen, ap("127.0.0.1:80"), 0, 7)), 4, 80)
	if err != nil || !done || len(socks) != 1 || socks[0].Inode != 7 {
		t.Errorf("a socket: %v %v %v", socks, done, err)
	}
	if socks, done, err := parseExact(errorMsg(5, 2), 5, 80); err != nil || !done || len(socks) != 0 {
		t.Errorf("ENOENT: %v %v %v", socks, done, err)
	}
	var de *diagError
	if _, _, err := parseExact(errorMsg(5, 95), 5, 80); !errors.As(err, &de) {
		t.Errorf("EOPNOTSUPP: %v; want a diagError", err)
	}
	if _, done, err := parseExact(diagMsg(6, afInet, 1, ap("127.0.0.1:80"), 0, 7), 6, 80); err != nil || !done {
		t.Errorf("an established socket: done %v, %v; want done, none", done, err)
	}
	if _, done, _ := parseExact(doneMsg(1), 2, 80); done {
		t.Error("another sequence's message ended the answer")
	}
}

func FuzzParseExact(f *testing.F) {
	ap := netip.MustParseAddrPort
	f.Add(diagMsg(1, afInet, tcpStateListen, ap("127.0.0.1:8080"), 1000, 11), uint32(1), uint16(8080))
	f.Add(slices.Concat(doneMsg(1), diagMsg(2, afInet6, tcpStateListen, ap("[::1]:443"), 0, 12)), uint32(2), uint16(443))
	f.Add(errorMsg(1, 2), uint32(1), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, seq uint32, port uint16) {
		socks, done, err := parseExact(b, seq, port)
		if len(socks) > 1 || len(socks) == 1 && (!done || err != nil) {
			t.Errorf("parseExact gave %v, %v, %v", socks, done, err)
		}
		for _, s := range socks {
			if s.Inode == 0 || port != 0 && s.Addr.Port() != port || !s.Addr.Addr().IsValid() || s.Addr.Addr().Is4In6() {
				t.Errorf("parseExact gave %+v for port %d", s, port)
			}
		}
	})
}
