//go:build linux

package listeners

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tcpListen is the state column of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// Listening returns the listening TCP sockets on port (every port when port
// is 0), IPv4 and IPv6. It asks the kernel for that port (netlink
// sock_diag, diagListening); where that cannot be asked, it reads
// /proc/net/tcp and /proc/net/tcp6 (procListening).
func Listening(port int) ([]Socket, error) {
	if socks, err := diagListening(port); err == nil {
		return socks, nil
	}
	return procListening(port)
}

// listeningFor is the listening sockets that may take a connection to
// addr (a superset: Answering picks among them): the one the kernel's own
// lookup finds (diagExact), else those the kernel lists for the port
// (diagAnswering), else Listening's.
func listeningFor(addr netip.AddrPort) ([]Socket, error) {
	if socks, err := diagExact(addr); err == nil {
		return socks, nil
	}
	if socks, err := diagAnswering(addr); err == nil {
		return socks, nil
	}
	return procListening(int(addr.Port()))
}

// procListening is Listening from /proc/net/tcp and /proc/net/tcp6, whose
// every line is read: its cost grows with every socket of the machine. A
// host without IPv6 has no tcp6 table, which is not an error.
func procListening(port int) ([]Socket, error) {
	var out []Socket
	for i, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		switch {
		case err == nil:
			out = append(out, parseTable(b, port)...)
		case i == 0:
			// No /proc here (or not this one): nothing can be told.
			return nil, fmt.Errorf("list listening sockets: %w: %w", errors.ErrUnsupported, err)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("list listening sockets: %w", err)
		}
	}
	return out, nil
}

// parseTable reads the listening sockets on port (any when 0) out of the
// text of /proc/net/tcp or tcp6. Lines it cannot read are skipped.
func parseTable(b []byte, port int) []Socket {
	var out []Socket
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode …
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, ok := parseAddr(f[1])
		if !ok || port != 0 && int(addr.Port()) != port {
			continue
		}
		uid, err1 := strconv.Atoi(f[7])
		inode, err2 := strconv.ParseUint(f[9], 10, 64)
		if err1 != nil || err2 != nil || inode == 0 {
			continue
		}
		out = append(out, Socket{Addr: addr, UID: uid, Inode: inode})
	}
	return out
}

// parseAddr reads "0100007F:4E20" (tcp) or 32 hex digits and a port (tcp6).
// The kernel prints the address as 32-bit words in host byte order, so each
// word is written back in native order to get the network-order bytes.
func parseAddr(s string) (netip.AddrPort, bool) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}

// Holders maps each of inodes to the pids (ascending) of the processes that
// hold it open, among those whose descriptors this user may read. An inode
// no visible process holds is absent. It reads every descriptor of every
// process of the machine; HoldersAmong reads only some processes'.
func Holders(inodes ...uint64) map[uint64][]int {
	out := map[uint64][]int{}
	if len(inodes) == 0 {
		return out
	}
	want := wanted(inodes)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			holdsAny(pid, want, out)
		}
	}
	for _, pids := range out {
		slices.Sort(pids)
	}
	return out
}

// HoldersAmong is Holders looking only at the descriptors of pids: the
// processes a listener is expected to belong to, read before (and
// instead of) every process of the machine.
func HoldersAmong(pids []int, inodes ...uint64) map[uint64][]int {
	out := map[uint64][]int{}
	if len(inodes) == 0 {
		return out
	}
	want := wanted(inodes)
	for _, pid := range pids {
		holdsAny(pid, want, out)
	}
	for _, pids := range out {
		slices.Sort(pids)
	}
	return out
}

// wanted maps the fd link of each socket inode ("socket:[123]") to it.
func wanted(inodes []uint64) map[string]uint64 {
	want := make(map[string]uint64, len(inodes))
	for _, in := range inodes {
		want["socket:["+strconv.FormatUint(in, 10)+"]"] = in
	}
	return want
}

// holdsAny adds pid to out under each inode of want that one of its
// descriptors names (once).
func holdsAny(pid int, want map[string]uint64, out map[uint64][]int) {
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue
		}
		if in, ok := want[link]; ok && !slices.Contains(out[in], pid) {
			out[in] = append(out[in], pid)
		}
	}
}

// CommandLine is a process's argv joined by spaces, cut to 80 bytes; "?"
// when it cannot be read.
func CommandLine(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
