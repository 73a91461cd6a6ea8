//go:build linux

package listeners

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"strconv"
)

// tcpTimeWait is the state column of a socket in TIME_WAIT. Such a line
// is what is left of a closed connection: its uid column is 0 and it has
// no owner, so it never names a peer.
const tcpTimeWait = "06"

// PeerUID returns the uid that owns the client end of the TCP connection
// from client to server, both sockets of this host: the socket whose local
// address is client and whose remote address is server, looked up in
// /proc/net/tcp (and in /proc/net/tcp6, where an IPv6 socket connected to
// an IPv4 address shows it mapped). It reads each table only until the
// line it wants. ErrNoPeer when no such socket is there.
func PeerUID(client, server netip.AddrPort) (int, error) {
	c, s := client.Addr().Unmap().WithZone(""), server.Addr().Unmap().WithZone("")
	if !c.IsValid() || !s.IsValid() || c.Is4() != s.Is4() {
		return -1, fmt.Errorf("find the owner of %s -> %s: %w", client, server, ErrNoPeer)
	}
	client, server = netip.AddrPortFrom(c, client.Port()), netip.AddrPortFrom(s, server.Port())
	type table struct {
		path  string
		six   bool // the tcp6 table: 16-byte addresses
		maybe bool // absent is not an error (no IPv6 here)
	}
	tables := []table{{"/proc/net/tcp6", true, true}}
	if c.Is4() {
		tables = []table{{"/proc/net/tcp", false, false}, {"/proc/net/tcp6", true, true}}
	}
	for _, t := range tables {
		uid, ok, err := peerIn(t.path, procAddr(client, t.six), procAddr(server, t.six))
		switch {
		case ok:
			return uid, nil
		case err != nil && !(t.maybe && errors.Is(err, fs.ErrNotExist)):
			return -1, fmt.Errorf("find the owner of %s -> %s: %w", client, server, err)
		}
	}
	return -1, fmt.Errorf("find the owner of %s -> %s: %w", client, server, ErrNoPeer)
}

// PeerOf tells whether the client end of the TCP connection from client to
// server is held by this process's user: its socket's uid (PeerUID) is
// this process's effective uid. Root is no exception: another uid is
// another user.
func PeerOf(client, server netip.AddrPort) (Peer, error) {
	uid, err := PeerUID(client, server)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Mine: uid == os.Geteuid(), User: "uid " + strconv.Itoa(uid)}, nil
}

// peerIn scans the table at path for the socket at local connected to
// remote (both as procAddr writes them).
func peerIn(path, local, remote string) (uid int, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return -1, false, err
	}
	defer f.Close()
	uid, ok, err = scanPeer(f, local, remote)
	if err != nil {
		return -1, false, fmt.Errorf("read %s: %w", path, err)
	}
	return uid, ok, nil
}

// scanPeer reads a /proc/net/tcp{,6} table from r up to the line of a
// socket (not in TIME_WAIT) at local connected to remote, and returns its
// uid. Lines it cannot read are skipped.
func scanPeer(r io.Reader, local, remote string) (uid int, ok bool, err error) {
	wantL, wantR := []byte(local), []byte(remote)
	sc := bufio.NewScanner(r)
	sc.Scan() // header
	for sc.Scan() {
		l, rm, st, u, lineOK := connLine(sc.Bytes())
		if lineOK && string(st) != tcpTimeWait && bytes.EqualFold(l, wantL) && bytes.EqualFold(rm, wantR) {
			return u, true, nil
		}
	}
	return -1, false, sc.Err()
}

// connLine splits one line of /proc/net/tcp{,6},
//
//	sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode …
//
// into its local address, remote address, state and uid columns. ok is
// false for a line with fewer columns or a uid that is not a decimal
// number below 2^32. The slices alias line.
func connLine(line []byte) (local, remote, state []byte, uid int, ok bool) {
	var f [8][]byte
	n := 0
	for i := 0; i < len(line) && n < len(f); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		if i > start {
			f[n] = line[start:i]
			n++
		}
	}
	if n < len(f) {
		return nil, nil, nil, -1, false
	}
	var u uint64
	for _, c := range f[7] {
		if c < '0' || c > '9' {
			return nil, nil, nil, -1, false
		}
		if u = u*10 + uint64(c-'0'); u > math.MaxUint32 {
			return nil, nil, nil, -1, false
		}
	}
	// As os.Geteuid does: a uid above 2^31 is negative where int is 32 bits.
	return f[1], f[2], f[3], int(u), true
}

// procAddr writes a as /proc/net/tcp (six false: a must be IPv4) or
// /proc/net/tcp6 (six true: an IPv4 address is written mapped) print it:
// the address as 32-bit words in host byte order, each as 8 upper-case hex
// digits, then ':' and the port as 4 hex digits. parseAddr reads it back.
func procAddr(a netip.AddrPort, six bool) string {
	var raw []byte
	if six {
		b := a.Addr().As16()
		raw = b[:]
	} else {
		b := a.Addr().Unmap().As4()
		raw = b[:]
	}
	out := make([]byte, 0, 2*len(raw)+5)
	for i := 0; i < len(raw); i += 4 {
		out = fmt.Appendf(out, "%08X", binary.NativeEndian.Uint32(raw[i:]))
	}
	return string(fmt.Appendf(out, ":%04X", a.Port()))
}
