package listeners

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// The netlink sock_diag messages that ask Linux for the listening TCP
// sockets on one port (sockdiag_linux.go sends them). They are written
// and read here, on every platform, so that the reading of the kernel's
// replies is tested and fuzzed wherever the tests run.
//
// A request is a netlink header (struct nlmsghdr, 16 bytes: length, type
// SOCK_DIAG_BY_FAMILY, flags NLM_F_REQUEST|NLM_F_DUMP, sequence, port id),
// then struct inet_diag_req_v2 (56 bytes: family, protocol, extensions,
// padding, the states bitmask, and struct inet_diag_sockid: source and
// destination ports in network byte order, two 16-byte addresses, the
// interface, the cookie), then, when a port is asked for, an
// INET_DIAG_REQ_BYTECODE attribute: a filter program the kernel runs on
// each socket, "source port >= p, then source port <= p". The kernel
// answers with one message per socket, struct inet_diag_msg (72 bytes:
// family, state, timer, retransmits, the sockid, expires, the queues, uid,
// inode), then NLMSG_DONE; or NLMSG_ERROR with a negative errno. Netlink's
// own integers are in host byte order; ports and addresses are in network
// byte order.
const (
	nlmsgHdrLen    = 16
	inetDiagReqLen = 56
	inetDiagMsgLen = 72
	nlaHdrLen      = 4
	bcOpLen        = 4 // struct inet_diag_bc_op: code, yes, no (u8, u8, u16)

	nlmsgError       = 2
	nlmsgDone        = 3
	sockDiagByFamily = 20

	nlmFRequest  = 0x1
	nlmFDumpIntr = 0x10
	nlmFDump     = 0x300 // NLM_F_ROOT | NLM_F_MATCH

	inetDiagReqBytecode = 1
	inetDiagBCSGE       = 2 // source port >= the next op's no
	inetDiagBCSLE       = 3 // source port <= the next op's no

	afInet         = 2
	afInet6        = 10
	ipprotoTCP     = 6
	tcpStateListen = 10 // TCP_LISTEN, the kernel's state number
)

// errDumpInterrupted says the kernel's socket tables changed while it
// answered (NLM_F_DUMP_INTR): the answer may miss a socket.
var errDumpInterrupted = errors.New("the socket table changed during the dump")

// diagError is an NLMSG_ERROR reply: the kernel refused the request.
type diagError struct{ errno int32 }

func (e *diagError) Error() string {
	return fmt.Sprintf("sock_diag: the kernel answered errno %d", e.errno)
}

// diagRequest is the message asking for the listening TCP sockets of
// family (afInet or afInet6) on port, or on every port when port is 0.
func diagRequest(family uint8, port uint16, seq uint32) []byte {
	var bc []byte
	if port != 0 {
		// Two comparisons, each an op and a second op holding the port in
		// its "no" field. A true comparison jumps to the next op ("yes":
		// 8 bytes on), and past the last one to the program's very end,
		// which accepts the socket; a false one jumps 4 bytes past the
		// end, which rejects it.
		const progLen = 4 * bcOpLen
		bc = appendOp(bc, inetDiagBCSGE, 2*bcOpLen, progLen+4)
		bc = appendOp(bc, 0, 0, port)
		bc = appendOp(bc, inetDiagBCSLE, 2*bcOpLen, progLen-2*bcOpLen+4)
		bc = appendOp(bc, 0, 0, port)
	}
	size := nlmsgHdrLen + inetDiagReqLen
	if bc != nil {
		size += nlaHdrLen + len(bc)
	}
	b := make([]byte, 0, size)
	b = binary.NativeEndian.AppendUint32(b, uint32(size))
	b = binary.NativeEndian.AppendUint16(b, sockDiagByFamily)
	b = binary.NativeEndian.AppendUint16(b, nlmFRequest|nlmFDump)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0) // the kernel
	// inet_diag_req_v2
	b = append(b, family, ipprotoTCP, 0, 0)
	b = binary.NativeEndian.AppendUint32(b, 1<<tcpStateListen)
	b = binary.BigEndian.AppendUint16(b, port) // sockid: source port
	b = append(b, make([]byte, inetDiagReqLen-4-4-2)...)
	if bc != nil {
		b = binary.NativeEndian.AppendUint16(b, uint16(nlaHdrLen+len(bc)))
		b = binary.NativeEndian.AppendUint16(b, inetDiagReqBytecode)
		b = append(b, bc...)
	}
	return b
}

func appendOp(b []byte, code, yes uint8, no uint16) []byte {
	b = append(b, code, yes)
	return binary.NativeEndian.AppendUint16(b, no)
}

// exactRequest is the message asking for the one TCP socket that takes a
// connection to addr (IPv4 or IPv6, unmapped): not a dump but the
// kernel's own lookup (inet_diag_find_one_icsk), the listener it would
// hand a connection to — bound to that address, else the wildcard — found
// through its hash tables, so it costs the same whatever the machine's
// sockets. The sockid holds addr as the source, no destination, no
// interface, and no cookie (INET_DIAG_NOCOOKIE). The kernel answers with
// one inet_diag_msg, or NLMSG_ERROR ENOENT when nothing takes it.
func exactRequest(addr netip.AddrPort, seq uint32) []byte {
	a := addr.Addr().Unmap()
	family := uint8(afInet6)
	if a.Is4() {
		family = afInet
	}
	b := make([]byte, 0, nlmsgHdrLen+inetDiagReqLen)
	b = binary.NativeEndian.AppendUint32(b, nlmsgHdrLen+inetDiagReqLen)
	b = binary.NativeEndian.AppendUint16(b, sockDiagByFamily)
	b = binary.NativeEndian.AppendUint16(b, nlmFRequest)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0) // the kernel
	b = append(b, family, ipprotoTCP, 0, 0)
	b = binary.NativeEndian.AppendUint32(b, 1<<tcpStateListen)
	b = binary.BigEndian.AppendUint16(b, addr.Port()) // source port
	b = binary.BigEndian.AppendUint16(b, 0)           // destination port
	var src [16]byte
	if a.Is4() {
		a4 := a.As4()
		copy(src[:], a4[:])
	} else {
		src = a.As16()
	}
	b = append(b, src[:]...)
	b = append(b, make([]byte, 16)...)                  // destination address
	b = binary.NativeEndian.AppendUint32(b, 0)          // interface
	b = binary.NativeEndian.AppendUint32(b, ^uint32(0)) // INET_DIAG_NOCOOKIE
	return binary.NativeEndian.AppendUint32(b, ^uint32(0))
}

// parseExact reads one datagram of the kernel's replies to an
// exactRequest with sequence number seq: done once the answer to it came
// (the socket, listed when it is a listening one on port, or an error);
// messages of another sequence are skipped. ENOENT, nothing takes the
// address, is done with no socket.
func parseExact(b []byte, seq uint32, port uint16) (socks []Socket, done bool, err error) {
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return nil, false, fmt.Errorf("sock_diag: a reply of %d bytes, shorter than its header", len(b))
		}
		n := binary.NativeEndian.Uint32(b[0:])
		typ := binary.NativeEndian.Uint16(b[4:])
		mseq := binary.NativeEndian.Uint32(b[8:])
		if n < nlmsgHdrLen || uint64(n) > uint64(len(b)) {
			return nil, false, fmt.Errorf("sock_diag: a reply says it is %d bytes, in %d", n, len(b))
		}
		body := b[nlmsgHdrLen:n]
		next := min((uint64(n)+3)&^3, uint64(len(b)))
		b = b[next:]
		if mseq != seq {
			continue
		}
		switch typ {
		case nlmsgError:
			if len(body) < 4 {
				return nil, false, errors.New("sock_diag: an error reply without its code")
			}
			switch e := int32(binary.NativeEndian.Uint32(body)); e {
			case 0, -enoent:
				return nil, true, nil
			default:
				return nil, false, &diagError{errno: -e}
			}
		case sockDiagByFamily:
			if s, ok := diagSocket(body, port); ok {
				return []Socket{s}, true, nil
			}
			return nil, true, nil
		default:
			return nil, false, fmt.Errorf("sock_diag: a reply of type %d", typ)
		}
	}
	return nil, false, nil
}

// enoent is ENOENT's number on Linux.
const enoent = 2

// parseDiag reads one datagram of the kernel's replies to the request with
// sequence number seq: the listening sockets on port (any when 0) it
// lists, and whether the answer is complete (NLMSG_DONE). Messages of
// another sequence (a stale answer) are skipped. A malformed message ends
// the reading with an error; so do NLMSG_ERROR (a *diagError) and an
// interrupted dump. A message that is not a listening socket, or names no
// inode, is skipped.
func parseDiag(b []byte, seq uint32, port uint16) (socks []Socket, done bool, err error) {
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return socks, false, fmt.Errorf("sock_diag: a reply of %d bytes, shorter than its header", len(b))
		}
		n := binary.NativeEndian.Uint32(b[0:])
		typ := binary.NativeEndian.Uint16(b[4:])
		flags := binary.NativeEndian.Uint16(b[6:])
		mseq := binary.NativeEndian.Uint32(b[8:])
		if n < nlmsgHdrLen || uint64(n) > uint64(len(b)) {
			return socks, false, fmt.Errorf("sock_diag: a reply says it is %d bytes, in %d", n, len(b))
		}
		body := b[nlmsgHdrLen:n]
		next := (uint64(n) + 3) &^ 3 // NLMSG_ALIGN
		if next > uint64(len(b)) {
			next = uint64(len(b))
		}
		b = b[next:]
		if mseq != seq {
			continue
		}
		if flags&nlmFDumpIntr != 0 {
			return socks, false, errDumpInterrupted
		}
		switch typ {
		case nlmsgDone:
			return socks, true, nil
		case nlmsgError:
			if len(body) < 4 {
				return socks, false, errors.New("sock_diag: an error reply without its code")
			}
			if e := int32(binary.NativeEndian.Uint32(body)); e != 0 {
				return socks, false, &diagError{errno: -e}
			}
			return socks, true, nil // an acknowledgement
		case sockDiagByFamily:
			if s, ok := diagSocket(body, port); ok {
				socks = append(socks, s)
			}
		}
	}
	return socks, false, nil
}

// diagSocket reads one struct inet_diag_msg: ok when it is a listening
// socket on port (any when 0) with an inode.
func diagSocket(m []byte, port uint16) (Socket, bool) {
	if len(m) < inetDiagMsgLen {
		return Socket{}, false
	}
	family, state := m[0], m[1]
	id := m[4:52] // inet_diag_sockid
	sport := binary.BigEndian.Uint16(id[0:])
	var addr netip.Addr
	switch family {
	case afInet:
		addr = netip.AddrFrom4([4]byte(id[4:8]))
	case afInet6:
		addr = netip.AddrFrom16([16]byte(id[4:20])).Unmap()
	default:
		return Socket{}, false
	}
	uid := binary.NativeEndian.Uint32(m[64:])
	inode := binary.NativeEndian.Uint32(m[68:])
	if state != tcpStateListen || port != 0 && sport != port || inode == 0 {
		return Socket{}, false
	}
	// As os.Geteuid does: a uid above 2^31 is negative where int is 32 bits.
	return Socket{Addr: netip.AddrPortFrom(addr, sport), UID: int(uid), Inode: uint64(inode)}, true
}
