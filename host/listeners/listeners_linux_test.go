//go:build linux

package listeners

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// hostWord is how /proc/net/tcp prints the address bytes a.b.c.d: the
// 32-bit word they form in memory, in host byte order.
func hostWord(a, b, c, d byte) string {
	return fmt.Sprintf("%08X", binary.NativeEndian.Uint32([]byte{a, b, c, d}))
}

func TestParseAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want string
	}{
		{hostWord(127, 0, 0, 1) + ":4E20", "127.0.0.1:20000"},
		{hostWord(0, 0, 0, 0) + ":0050", "0.0.0.0:80"},
		{strings.Repeat("0", 24) + hostWord(0, 0, 0, 1) + ":1F90", "[::1]:8080"},
		{strings.Repeat("0", 32) + ":1F90", "[::]:8080"},
		// ::ffff:127.0.0.1 is unmapped to 127.0.0.1.
		{strings.Repeat("0", 16) + hostWord(0, 0, 0xff, 0xff) + hostWord(127, 0, 0, 1) + ":4E21", "127.0.0.1:20001"},
	}
	for _, tc := range tests {
		got, ok := parseAddr(tc.text)
		if !ok || got.String() != tc.want {
			t.Errorf("parseAddr(%q) = %v, %v; want %s", tc.text, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007F:XYZ", "01007F:0050", "0100007F:10000"} {
		if got, ok := parseAddr(bad); ok {
			t.Errorf("parseAddr(%q) = %v; want it refused", bad, got)
		}
	}
}

func TestParseTable(t *testing.T) {
	t.Parallel()
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: " + hostWord(127, 0, 0, 1) + ":4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n" +
		"   1: " + hostWord(127, 0, 0, 1) + ":4E20 " + hostWord(127, 0, 0, 1) + ":C350 01 00000000:00000000 00:00000000 00000000  1000        0 112 1 0 100 0 0 10 0\n" +
		"   2: " + hostWord(0, 0, 0, 0) + ":4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 113 1 0 100 0 0 10 0\n" +
		"   3: garbage\n"
	got := parseTable([]byte(table), 20000)
	if len(got) != 1 || got[0].Addr.String() != "127.0.0.1:20000" || got[0].UID != 1000 || got[0].Inode != 111 {
		t.Errorf("parseTable(port 20000) = %+v; want the one listening socket, uid 1000, inode 111", got)
	}
	if all := parseTable([]byte(table), 0); len(all) != 2 {
		t.Errorf("parseTable(any port) = %+v; want the 2 listening sockets", all)
	}
}

func TestAnswering(t *testing.T) {
	t.Parallel()
	sock := func(addr string, inode uint64) Socket {
		return Socket{Addr: netip.MustParseAddrPort(addr), Inode: inode}
	}
	socks := []Socket{
		sock("127.0.0.1:20000", 1),
		sock("0.0.0.0:20000", 2),
		sock("[::]:20000", 3),
		sock("[::1]:20001", 4),
		sock("[::]:20002", 5),
		sock("127.0.0.1:20003", 6),
		sock("127.0.0.1:20003", 7), // SO_REUSEPORT
	}
	tests := []struct {
		addr string
		want []uint64
	}{
		{"127.0.0.1:20000", []uint64{1}},          // the exact address wins
		{"10.1.2.3:20000", []uint64{2}},           // then the IPv4 wildcard
		{"[::1]:20000", []uint64{3}},              // IPv6: the IPv6 wildcard
		{"[::ffff:127.0.0.1]:20000", []uint64{1}}, // mapped is IPv4
		{"127.0.0.1:20001", nil},                  // only ::1 listens there
		{"[::1]:20001", []uint64{4}},
		{"127.0.0.1:20002", []uint64{5}}, // :: takes IPv4 (unless v6only)
		{"127.0.0.1:20003", []uint64{6, 7}},
		{"127.0.0.1:20009", nil},
	}
	for _, tc := range tests {
		var got []uint64
		for _, s := range Answering(socks, netip.MustParseAddrPort(tc.addr)) {
			got = append(got, s.Inode)
		}
		if !equal(got, tc.want) {
			t.Errorf("Answering(%s) = inodes %v; want %v", tc.addr, got, tc.want)
		}
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCheckThisProcess: a listener of this process is this process's, and
// another's for any other process set, named with this pid; an address
// that is not this host's, or a port nobody listens on, cannot be told.
func TestCheckThisProcess(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	for _, host := range []string{"127.0.0.1", "::1", "0.0.0.0"} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Logf("listen on %s: %v (skipped)", host, err)
			continue
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		probe := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
		if host == "::1" {
			probe = netip.AddrPortFrom(netip.IPv6Loopback(), port)
		}
		if err := Check(probe, func(pid int) bool { return pid == self }); err != nil {
			t.Errorf("Check(%s) for this process = %v; want nil", probe, err)
		}
		err = Check(probe, func(int) bool { return false })
		var fe *ForeignError
		if !errors.As(err, &fe) || fe.Pid != self {
			t.Errorf("Check(%s) for nobody = %v; want a ForeignError naming pid %d", probe, err, self)
		} else if want := "port " + strconv.Itoa(int(port)) + " is answered by pid " + strconv.Itoa(self) + " ("; !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "), not by this service") {
			t.Errorf("Check message = %q; want %q…, not by this service", err, want)
		}
		if got := HolderPid(int(port)); got != self {
			t.Errorf("HolderPid(%d) = %d; want %d", port, got, self)
		}
		if got := Holder(int(port)); !strings.HasPrefix(got, "pid "+strconv.Itoa(self)+" (") {
			t.Errorf("Holder(%d) = %q; want this process", port, got)
		}
		// 192.0.2.1 (TEST-NET-1) is no address of this host.
		remote := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), port)
		if err := Check(remote, func(int) bool { return false }); err != nil {
			t.Errorf("Check(%s) = %v; want nil (not this host: cannot tell)", remote, err)
		}
		l.Close()
		// The freed port is anyone's: another test process (a second
		// make test beside this one) may listen on it at once. What
		// must hold is that this process is no longer named.
		err = Check(probe, func(int) bool { return false })
		if errors.As(err, &fe) && fe.Pid == self || err != nil && !errors.As(err, &fe) {
			t.Errorf("Check(%s) after close = %v; want nil (nobody listens) or another process", probe, err)
		}
		if got := Holder(int(port)); strings.HasPrefix(got, "pid "+strconv.Itoa(self)+" (") {
			t.Errorf("Holder(%d) after close = %q; want empty or another process", port, got)
		}
	}
}

// TestCheckAnotherProcess: a listener held by a child (another process
// group) is named with the child's pid and command line.
func TestCheckAnotherProcess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperListen$")
	cmd.Env = append(os.Environ(), "BINKY_LISTENERS_HELPER=1")
	line, err := startHelper(t, cmd)
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	probe := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	err = Check(probe, func(pid int) bool { return pid == os.Getpid() })
	var fe *ForeignError
	if !errors.As(err, &fe) || fe.Pid != cmd.Process.Pid || !strings.Contains(fe.Command, "TestHelperListen") {
		t.Fatalf("Check = %v; want the helper, pid %d", err, cmd.Process.Pid)
	}
	if err := Check(probe, func(pid int) bool { return pid == cmd.Process.Pid }); err != nil {
		t.Errorf("Check for the helper's own set = %v; want nil", err)
	}
}

// TestHelperListen is the child of TestCheckAnotherProcess (and of the
// sock_diag tests): it listens on $BINKY_LISTENERS_ADDR (127.0.0.1:0 when
// unset), prints the port, and holds it until stdin closes.
func TestHelperListen(t *testing.T) {
	if os.Getenv("BINKY_LISTENERS_HELPER") == "" {
		t.Skip("helper process")
	}
	addr := os.Getenv("BINKY_LISTENERS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Stdout.WriteString(strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "\n")
	buf := make([]byte, 1)
	os.Stdin.Read(buf) // until the parent closes stdin
}

// TestCheckAnotherUser: a user who cannot see the holder's descriptors is
// told the port belongs to another user. It runs Check in a copy of this
// test binary as nobody (uid 65534) against a listener of this (root)
// process, so it needs root.
func TestCheckAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a check as another user")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	cmd := nobodyCommand(t, "^TestHelperCheck$", "BINKY_LISTENERS_CHECK="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Skipf("cannot run the test binary as nobody here: %v", err)
	}
	if err != nil {
		t.Fatalf("check as nobody: %v\n%s", err, out)
	}
	want := fmt.Sprintf("port %d is answered by a process of another user (uid 0), not by this service", port)
	if !strings.Contains(string(out), "check: "+want+"\n") {
		t.Errorf("check as nobody said:\n%s\nwant %q", out, want)
	}
}

// TestHelperCheck is the child of TestCheckAnotherUser.
func TestHelperCheck(t *testing.T) {
	port, _ := strconv.Atoi(os.Getenv("BINKY_LISTENERS_CHECK"))
	if port == 0 {
		t.Skip("helper process")
	}
	err := Check(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), func(int) bool { return false })
	fmt.Printf("check: %v\n", err)
}

// startHelper starts cmd (a copy of this test binary as a helper process)
// with its stdin held open until the test ends, and returns the first line
// it writes to stdout.
func startHelper(t *testing.T, cmd *exec.Cmd) (string, error) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("run the helper: %v", err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return bufio.NewReader(stdout).ReadString('\n')
}

// TestVetterCheckListening: a port nobody listens on passes Check (the
// answer is taken at its word) and fails CheckListening; a listener of
// this process passes both.
func TestVetterCheckListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(l.Addr().String())
	self := os.Getpid()
	v := NewVetter(func(p int) bool { return p == self }, func() []int { return []int{self} })
	for i, check := range []func(netip.AddrPort) error{v.Check, v.CheckListening} {
		if err := check(addr); err != nil {
			t.Errorf("check %d of a listener of this process = %v", i, err)
		}
	}
	l.Close()
	if err := v.Check(addr); err != nil {
		t.Errorf("Check of a closed port = %v; want nil", err)
	}
	var ne *NotListeningError
	if err := v.CheckListening(addr); !errors.As(err, &ne) || ne.Addr != addr {
		t.Errorf("CheckListening of a closed port = %v; want a NotListeningError for %s", err, addr)
	}
}
