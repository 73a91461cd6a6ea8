//go:build linux

package listeners

import (
	"errors"
	"fmt"
	"github.com/binkyhq/binky/internal/testbin"
	"github.com/binkyhq/binky/internal/testroot"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// loopbackPair connects to a listener on host and returns both ends: the
// client's connection and the one the listener accepted.
func loopbackPair(t *testing.T, host string) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("listen on %s: %v", host, err)
	}
	defer l.Close()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

func addrPort(a net.Addr) netip.AddrPort { return a.(*net.TCPAddr).AddrPort() }

// TestPeerUIDOfALoopbackConnection: the client end of a real loopback
// connection, IPv4 and IPv6, is found in /proc/net/tcp{,6} as this user's,
// from the addresses the server side sees; a pair no socket has is
// ErrNoPeer.
func TestPeerUIDOfALoopbackConnection(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "::1"} {
		t.Run(host, func(t *testing.T) {
			_, server := loopbackPair(t, host)
			from, to := addrPort(server.RemoteAddr()), addrPort(server.LocalAddr())
			uid, err := PeerUID(from, to)
			if err != nil || uid != os.Geteuid() {
				t.Fatalf("PeerUID(%s, %s) = %d, %v; want %d (this process)", from, to, uid, err, os.Geteuid())
			}
			peer, err := PeerOf(from, to)
			if err != nil || !peer.Mine || peer.User != "uid "+strconv.Itoa(os.Geteuid()) {
				t.Errorf("PeerOf(%s, %s) = %+v, %v; want mine, uid %d", from, to, peer, err, os.Geteuid())
			}
			// A client port no socket has is nobody's.
			other := netip.AddrPortFrom(from.Addr(), from.Port()+1)
			if other.Port() == to.Port() {
				other = netip.AddrPortFrom(from.Addr(), from.Port()+2)
			}
			if uid, err := PeerUID(other, to); !errors.Is(err, ErrNoPeer) {
				t.Errorf("PeerUID(%s, %s) for no socket = %d, %v; want ErrNoPeer", other, to, uid, err)
			}
		})
	}
}

// TestPeerUIDOfAMappedClient: an IPv6 socket connected to 127.0.0.1 is in
// /proc/net/tcp6 with mapped addresses; the server sees plain IPv4 ones,
// and the client is still found.
func TestPeerUIDOfAMappedClient(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("no IPv6 socket here: %v", err)
	}
	defer syscall.Close(fd)
	sa := &syscall.SockaddrInet6{Port: l.Addr().(*net.TCPAddr).Port, Addr: netip.MustParseAddr("::ffff:127.0.0.1").As16()}
	if err := syscall.Connect(fd, sa); err != nil {
		t.Skipf("IPv6 socket cannot reach 127.0.0.1 here (v6only?): %v", err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	from, to := addrPort(server.RemoteAddr()), addrPort(server.LocalAddr())
	if !from.Addr().Is4() {
		t.Fatalf("server sees the client at %s; want an IPv4 address", from)
	}
	if uid, err := PeerUID(from, to); err != nil || uid != os.Geteuid() {
		t.Errorf("PeerUID(%s, %s) = %d, %v; want %d", from, to, uid, err, os.Geteuid())
	}
}

// TestPeerOfAnotherUser: a client running as nobody (uid 65534) is found
// as uid 65534 and not this user's. It needs root, to run a copy of this
// test binary as nobody.
func TestPeerOfAnotherUser(t *testing.T) {
	t.Parallel()
	testroot.Need(t, "to connect as another user (uid 65534)")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := nobodyCommand(t, "^TestHelperDial$", "BINKY_LISTENERS_DIAL="+l.Addr().String())
	// The helper says "dialled" once connected, or why not.
	if line, err := startHelper(t, cmd); err != nil || line != "dialled\n" {
		t.Fatalf("helper as nobody said %q (%v)", line, err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	from, to := addrPort(server.RemoteAddr()), addrPort(server.LocalAddr())
	if uid, err := PeerUID(from, to); err != nil || uid != 65534 {
		t.Errorf("PeerUID(%s, %s) = %d, %v; want 65534 (nobody)", from, to, uid, err)
	}
	if peer, err := PeerOf(from, to); err != nil || peer.Mine || peer.User != "uid 65534" {
		t.Errorf("PeerOf(%s, %s) = %+v, %v; want not mine, uid 65534", from, to, peer, err)
	}
}

// TestHelperDial is the child of TestPeerOfAnotherUser: it connects to
// BINKY_LISTENERS_DIAL, says so, and holds the connection until stdin
// closes.
func TestHelperDial(t *testing.T) {
	addr := os.Getenv("BINKY_LISTENERS_DIAL")
	if addr == "" {
		t.Skip("helper process")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Printf("dial %s: %v\n", addr, err)
		return
	}
	defer c.Close()
	fmt.Println("dialled")
	buf := make([]byte, 1)
	os.Stdin.Read(buf) // until the parent closes stdin
}

// nobodyCommand runs a copy of this test binary, limited to the tests run
// matches, as nobody (uid and gid 65534), with env added. The copy sits in
// a directory nobody can read: the test binary's own directory is private
// to root.
func nobodyCommand(t *testing.T, run string, env ...string) *exec.Cmd {
	t.Helper()
	dir, err := os.MkdirTemp("", "binky-listeners-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "listeners.test")
	testbin.CopySelf(t, bin)
	cmd := exec.Command(bin, "-test.run="+run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}

func TestScanPeer(t *testing.T) {
	t.Parallel()
	lo := func(port uint16) string {
		return procAddr(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), false)
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: " + lo(7355) + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n" +
		"   1: " + lo(7355) + " " + lo(50000) + " 01 00000000:00000000 00:00000000 00000000  1000        0 112 1 0 100 0 0 10 0\n" +
		"   2: " + lo(50000) + " " + lo(7355) + " 01 00000000:00000000 00:00000000 00000000  1001        0 113 1 0 100 0 0 10 0\n" +
		"   3: " + lo(50001) + " " + lo(7355) + " 06 00000000:00000000 03:00000000 00000000     0        0 0 3 0000000000000000\n" +
		"   4: " + strings.ToLower(lo(50002)) + " " + lo(7355) + " 01 00000000:00000000 00:00000000 00000000  1002        0 114 1 0 100 0 0 10 0\n" +
		"   5: garbage\n"
	for _, tc := range []struct {
		client uint16
		uid    int
		ok     bool
	}{
		{50000, 1001, true}, // the client's line, not the server's
		{50001, -1, false},  // TIME_WAIT: no owner
		{50002, 1002, true}, // hex digits in either case
		{50003, -1, false},
	} {
		uid, ok, err := scanPeer(strings.NewReader(table), lo(tc.client), lo(7355))
		if err != nil || ok != tc.ok || uid != tc.uid {
			t.Errorf("scanPeer(client port %d) = %d, %v, %v; want %d, %v", tc.client, uid, ok, err, tc.uid, tc.ok)
		}
	}
}

func TestProcAddrRoundTrips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		six  bool
		want string // what parseAddr reads back
	}{
		{"127.0.0.1:7355", false, "127.0.0.1:7355"},
		{"127.0.0.1:7355", true, "127.0.0.1:7355"}, // mapped, unmapped again
		{"[::1]:80", true, "[::1]:80"},
		{"[2001:db8::1]:65535", true, "[2001:db8::1]:65535"},
	} {
		s := procAddr(netip.MustParseAddrPort(tc.addr), tc.six)
		got, ok := parseAddr(s)
		if !ok || got.String() != tc.want {
			t.Errorf("parseAddr(procAddr(%s, six %v) = %q) = %v, %v; want %s", tc.addr, tc.six, s, got, ok, tc.want)
		}
	}
	if got, want := procAddr(netip.MustParseAddrPort("127.0.0.1:20000"), false), hostWord(127, 0, 0, 1)+":4E20"; got != want {
		t.Errorf("procAddr(127.0.0.1:20000) = %q; want %q", got, want)
	}
}

func TestConnLine(t *testing.T) {
	t.Parallel()
	l, r, st, uid, ok := connLine([]byte("   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000  1001        0 113 1 0 100 0 0 10 0"))
	if !ok || string(l) != "0100007F:C350" || string(r) != "0100007F:1CBB" || string(st) != "01" || uid != 1001 {
		t.Errorf("connLine = %q %q %q %d %v; want the columns of the line, uid 1001", l, r, st, uid, ok)
	}
	for _, bad := range []string{
		"",
		"   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000",
		"   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000  -1 0 1",
		"   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000  4294967296 0 1",
		"   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000  10x1 0 1",
	} {
		if _, _, _, uid, ok := connLine([]byte(bad)); ok {
			t.Errorf("connLine(%q) = uid %d; want it refused", bad, uid)
		}
	}
}

// FuzzConnLine: connLine never panics, and what it takes it reads back the
// same from a line rebuilt of its columns.
func FuzzConnLine(f *testing.F) {
	f.Add([]byte("   2: 0100007F:C350 0100007F:1CBB 01 00000000:00000000 00:00000000 00000000  1001        0 113 1 0 100 0 0 10 0"))
	f.Add([]byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"))
	f.Add([]byte("   0: 00000000000000000000000001000000:1CBB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  4294967295"))
	f.Add([]byte("\t1:\ta\tb\tc\td\te\tf\t0"))
	f.Fuzz(func(t *testing.T, line []byte) {
		l, r, st, uid, ok := connLine(line)
		if !ok {
			return
		}
		for _, col := range [][]byte{l, r, st} {
			if len(col) == 0 || strings.ContainsAny(string(col), " \t") {
				t.Fatalf("connLine(%q) gave column %q", line, col)
			}
		}
		rebuilt := fmt.Sprintf("0: %s %s %s x x x %d", l, r, st, uint32(uid))
		l2, r2, st2, uid2, ok2 := connLine([]byte(rebuilt))
		if !ok2 || string(l2) != string(l) || string(r2) != string(r) || string(st2) != string(st) || uid2 != uid {
			t.Fatalf("connLine(%q) = %q %q %q %d; rebuilt %q reads %q %q %q %d %v", line, l, r, st, uid, rebuilt, l2, r2, st2, uid2, ok2)
		}
	})
}

// FuzzProcAddr: whatever address procAddr writes, parseAddr reads back.
func FuzzProcAddr(f *testing.F) {
	f.Add(netip.MustParseAddr("127.0.0.1").AsSlice(), uint16(7355))
	f.Add(netip.IPv6Loopback().AsSlice(), uint16(80))
	f.Add(netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), uint16(0))
	f.Fuzz(func(t *testing.T, raw []byte, port uint16) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		ap := netip.AddrPortFrom(a, port)
		want := netip.AddrPortFrom(a.Unmap(), port)
		for _, six := range []bool{false, true} {
			if !six && !a.Unmap().Is4() {
				continue
			}
			s := procAddr(ap, six)
			if got, ok := parseAddr(s); !ok || got != want {
				t.Fatalf("parseAddr(procAddr(%s, six %v) = %q) = %v, %v; want %s", ap, six, s, got, ok, want)
			}
		}
	})
}

// BenchmarkPeerUID is the cost of one page's lookup on this host's table.
func BenchmarkPeerUID(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	from, to := addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	for b.Loop() {
		if _, err := PeerUID(from, to); err != nil {
			b.Fatal(err)
		}
	}
}
