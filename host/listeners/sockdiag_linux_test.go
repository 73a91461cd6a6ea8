//go:build linux

package listeners

import (
	"cmp"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/binkyhq/binky/internal/testroot"
	"golang.org/x/sys/unix"
)

// needDiag fails the test when the kernel cannot be asked (sock_diag), so
// that a test comparing the two ways never passes by using one.
func needDiag(t *testing.T) {
	t.Helper()
	if _, err := diagListening(1); err != nil {
		t.Fatalf("netlink sock_diag is not available here: %v", err)
	}
}

// TestDiagFindsWhatProcFinds: for a listener this test opens — in this
// process, in a child, in a child of another user, on IPv4 and IPv6 — the
// kernel's answer for that one port (diagListening) is the sockets
// /proc/net/tcp{,6} lists (procListening), and the holder a Vetter finds
// among the expected processes is the one the machine-wide scan finds; a
// port nobody listens on has no socket either way and passes.
func TestDiagFindsWhatProcFinds(t *testing.T) {
	t.Parallel()
	needDiag(t)
	self := os.Getpid()
	inProcess := func(addr string) func(*testing.T) (int, int, int) {
		return func(t *testing.T) (int, int, int) {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Skipf("listen on %s: %v", addr, err)
			}
			t.Cleanup(func() { l.Close() })
			return l.Addr().(*net.TCPAddr).Port, self, os.Geteuid()
		}
	}
	inChild := func(addr string, nobody bool) func(*testing.T) (int, int, int) {
		return func(t *testing.T) (int, int, int) {
			var cmd *exec.Cmd
			uid := os.Geteuid()
			if nobody {
				testroot.Need(t, "to hold a listener as another user")
				cmd, uid = nobodyCommand(t, "^TestHelperListen$", "BINKY_LISTENERS_HELPER=1", "BINKY_LISTENERS_ADDR="+addr), 65534
			} else {
				cmd = exec.Command(os.Args[0], "-test.run=^TestHelperListen$")
				cmd.Env = append(os.Environ(), "BINKY_LISTENERS_HELPER=1", "BINKY_LISTENERS_ADDR="+addr)
			}
			line, err := startHelper(t, cmd)
			port, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				t.Skipf("the helper listening on %s said %q (%v)", addr, line, err)
			}
			return port, cmd.Process.Pid, uid
		}
	}
	tests := []struct {
		name  string
		open  func(*testing.T) (port, pid, uid int)
		probe string
	}{
		{"this process, IPv4", inProcess("127.0.0.1:0"), "127.0.0.1"},
		{"this process, IPv6", inProcess("[::1]:0"), "::1"},
		{"this process, dual stack", inProcess("[::]:0"), "127.0.0.1"},
		{"a child, IPv4", inChild("127.0.0.1:0", false), "127.0.0.1"},
		{"a child, IPv6", inChild("[::1]:0", false), "::1"},
		{"another user's child", inChild("127.0.0.1:0", true), "127.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			port, pid, uid := tc.open(t)
			viaDiag := sameSockets(t, port)
			if len(viaDiag) == 0 {
				t.Fatalf("no listening socket on port %d", port)
			}
			for _, s := range viaDiag {
				if s.UID != uid {
					t.Errorf("socket %+v; want uid %d", s, uid)
				}
			}
			probe := netip.AddrPortFrom(netip.MustParseAddr(tc.probe), uint16(port))
			few, err := diagAnswering(probe)
			if err != nil {
				t.Fatalf("diagAnswering(%s): %v", probe, err)
			}
			if got, want := inodesOf(Answering(few, probe)), inodesOf(Answering(viaDiag, probe)); !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("the sockets answering %s, asked for that address: %v; asked for the port: %v", probe, got, want)
			}
			old := Holders(inodesOf(Answering(viaDiag, probe))...)
			var oldPids []int
			for _, pids := range old {
				oldPids = append(oldPids, pids...)
			}
			if !slices.Contains(oldPids, pid) {
				t.Fatalf("the machine-wide scan finds %v; want pid %d among them", oldPids, pid)
			}
			own := func() []int { return []int{pid} }
			if err := NewVetter(func(p int) bool { return p == pid }, own).Check(probe); err != nil {
				t.Errorf("Vetter(pid %d).Check(%s) = %v; want nil", pid, probe, err)
			}
			err = NewVetter(func(int) bool { return false }, own).Check(probe)
			if fe := (*ForeignError)(nil); !errors.As(err, &fe) || fe.Pid != slices.Min(oldPids) {
				t.Errorf("Vetter(nobody).Check(%s) = %v; want a ForeignError naming pid %d, as Check does", probe, err, slices.Min(oldPids))
			}
		})
	}
	t.Run("nobody listens", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if got := sameSockets(t, port); len(got) != 0 {
			t.Errorf("port %d after close: %v; want no socket", port, got)
		}
		probe := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
		if err := NewVetter(func(int) bool { return false }, nil).Check(probe); err != nil {
			t.Errorf("Vetter.Check(%s) with nobody listening = %v; want nil", probe, err)
		}
	})
}

// sameSockets is the listening sockets on port as the kernel tells them,
// after checking that /proc/net/tcp{,6} lists the same.
func sameSockets(t *testing.T, port int) []Socket {
	t.Helper()
	viaDiag, err := diagListening(port)
	if err != nil {
		t.Fatalf("diagListening(%d): %v", port, err)
	}
	viaProc, err := procListening(port)
	if err != nil {
		t.Fatalf("procListening(%d): %v", port, err)
	}
	byInode := func(a, b Socket) int { return cmp.Compare(a.Inode, b.Inode) }
	slices.SortFunc(viaDiag, byInode)
	slices.SortFunc(viaProc, byInode)
	if !slices.Equal(viaDiag, viaProc) {
		t.Errorf("port %d: sock_diag says %v, /proc/net/tcp says %v", port, viaDiag, viaProc)
	}
	return viaDiag
}

// TestDiagFilterIsTheKernels: the kernel takes the port filter and
// answers only that port's sockets (asked raw, with no filter of the
// reader's), and every port's without a filter.
func TestDiagFilterIsTheKernels(t *testing.T) {
	t.Parallel()
	needDiag(t)
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pa, pb := uint16(a.Addr().(*net.TCPAddr).Port), uint16(b.Addr().(*net.TCPAddr).Port)
	ports := func(filter uint16) []uint16 {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Sendto(fd, diagRequest(afInet, filter, 9), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			t.Fatal(err)
		}
		var out []uint16
		buf := make([]byte, 32<<10)
		for {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				t.Fatal(err)
			}
			socks, done, err := parseDiag(buf[:n], 9, 0) // every port the kernel sent
			if err != nil {
				t.Fatalf("the kernel's answer to the filter on %d: %v", filter, err)
			}
			for _, s := range socks {
				out = append(out, s.Addr.Port())
			}
			if done {
				return out
			}
		}
	}
	if got := ports(pa); !slices.Equal(got, []uint16{pa}) {
		t.Errorf("filter on port %d: the kernel sent ports %v; want only it", pa, got)
	}
	if got := ports(0); !slices.Contains(got, pa) || !slices.Contains(got, pb) {
		t.Errorf("no filter: the kernel sent ports %v; want %d and %d among them", got, pa, pb)
	}
}

// TestVetterRemembers: a Vetter looks at the processes again only when
// the socket that answers changed; a foreign holder is looked at each
// time.
func TestVetterRemembers(t *testing.T) {
	t.Parallel()
	needDiag(t)
	self := os.Getpid()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	probe := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	var looked int
	v := NewVetter(func(p int) bool { return p == self }, func() []int { looked++; return []int{self} })
	for i := range 3 {
		if err := v.Check(probe); err != nil {
			t.Fatalf("check %d = %v; want nil", i, err)
		}
	}
	if looked != 1 {
		t.Errorf("3 checks of the same socket looked at the processes %d times; want 1", looked)
	}
	l.Close()
	if err := v.Check(probe); err != nil || looked != 1 {
		t.Errorf("check with nobody listening = %v, looked %d times; want nil, no look", err, looked)
	}
	l2, err := net.Listen("tcp", probe.String())
	if err != nil {
		t.Fatalf("listen again on %s: %v", probe, err)
	}
	defer l2.Close()
	if err := v.Check(probe); err != nil || looked != 2 {
		t.Errorf("check of a new socket on the port = %v, looked %d times; want nil, 2", err, looked)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperListen$")
	cmd.Env = append(os.Environ(), "BINKY_LISTENERS_HELPER=1")
	line, err := startHelper(t, cmd)
	cport, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	cprobe := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(cport))
	asked := 0
	foreign := NewVetter(func(p int) bool { asked++; return p == self }, nil)
	for i := range 2 {
		var fe *ForeignError
		if err := foreign.Check(cprobe); !errors.As(err, &fe) || fe.Pid != cmd.Process.Pid {
			t.Fatalf("check %d of the child's port = %v; want a ForeignError naming pid %d", i, err, cmd.Process.Pid)
		}
	}
	if asked < 2 {
		t.Errorf("2 checks of a foreign socket asked about its holder %d times; want each time", asked)
	}
}

// TestDiagExactIsTheDumps: the kernel's own lookup of the socket that takes
// a connection to an address (diagExact) finds the socket the port's dump
// narrowed by Answering finds, for listeners on a loopback address, the
// IPv4 wildcard and the IPv6 one (which takes IPv4 too), and none where
// nothing listens.
func TestDiagExactIsTheDumps(t *testing.T) {
	needDiag(t)
	if _, err := diagExact(netip.MustParseAddrPort("127.0.0.1:1")); err != nil {
		t.Fatalf("the kernel's lookup cannot be asked here: %v", err)
	}
	for _, c := range []struct{ listen, network string }{
		{"127.0.0.1:0", "tcp4"}, {"0.0.0.0:0", "tcp4"}, {"[::]:0", "tcp"}, {"[::1]:0", "tcp6"},
	} {
		l, err := net.Listen(c.network, c.listen)
		if err != nil {
			t.Logf("%s: %v (skipped)", c.listen, err)
			continue
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		probes := []string{"127.0.0.1", "::1"}
		for _, a := range probes {
			addr := netip.AddrPortFrom(netip.MustParseAddr(a), port)
			got, err := diagExact(addr)
			if err != nil {
				t.Fatalf("%s, probed at %s: %v", c.listen, addr, err)
			}
			all, err := diagAnswering(addr)
			if err != nil {
				t.Fatal(err)
			}
			want := Answering(all, addr)
			if !slices.Equal(inodesOf(got), inodesOf(want)) {
				t.Errorf("%s, probed at %s: the lookup found %v, the dump %v", c.listen, addr, got, want)
			}
		}
		l.Close()
		for _, a := range probes {
			addr := netip.AddrPortFrom(netip.MustParseAddr(a), port)
			if got, err := diagExact(addr); err != nil || len(got) != 0 {
				t.Errorf("%s closed, probed at %s: %v, %v; want nothing", c.listen, addr, got, err)
			}
		}
	}
}
