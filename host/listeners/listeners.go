package listeners

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
)

// Socket is one listening TCP socket.
type Socket struct {
	Addr  netip.AddrPort // local address; IPv4-mapped IPv6 addresses are unmapped
	UID   int            // the user that opened it
	Inode uint64         // what /proc/<pid>/fd links name as socket:[inode]
}

// ForeignError is Check's answer when the socket that answers a port is not
// held by the process set it was asked about.
type ForeignError struct {
	Port    int
	Pid     int    // the holder; 0 when no holder is visible to this user
	Command string // the holder's command line, when Pid is set
	UID     int    // the socket's owner, when Pid is 0
}

func (e *ForeignError) Error() string {
	if e.Pid != 0 {
		return fmt.Sprintf("port %d is answered by pid %d (%s), not by this service", e.Port, e.Pid, e.Command)
	}
	return fmt.Sprintf("port %d is answered by a process of another user (uid %d), not by this service", e.Port, e.UID)
}

// NotListeningError is CheckListening's answer when this host can tell that
// no socket listens at the address.
type NotListeningError struct {
	Addr netip.AddrPort
}

func (e *NotListeningError) Error() string {
	return fmt.Sprintf("nothing listens on %s any more", e.Addr)
}

// Describe names a process the way errors show it: "pid 1234 (python3 -m
// http.server)".
func Describe(pid int) string { return fmt.Sprintf("pid %d (%s)", pid, CommandLine(pid)) }

// Answering narrows socks to those that accept a TCP connection to addr, as
// the kernel picks them: sockets bound to addr's very address, else the
// wildcard of its family (0.0.0.0 for IPv4, then :: which also takes IPv4
// unless it is IPv6-only). Sockets on other ports are dropped. Several
// sockets remain when they share the address (SO_REUSEPORT).
func Answering(socks []Socket, addr netip.AddrPort) []Socket {
	a := addr.Addr().Unmap().WithZone("")
	var exact, wild4, wild6 []Socket
	for _, s := range socks {
		if s.Addr.Port() != addr.Port() {
			continue
		}
		switch la := s.Addr.Addr().Unmap().WithZone(""); {
		case la == a:
			exact = append(exact, s)
		case la == netip.IPv4Unspecified():
			if a.Is4() {
				wild4 = append(wild4, s)
			}
		case la == netip.IPv6Unspecified():
			wild6 = append(wild6, s)
		}
	}
	switch {
	case len(exact) > 0:
		return exact
	case len(wild4) > 0:
		return wild4
	}
	return wild6
}

// Check tells whether the socket that answers a TCP connection to addr is
// held by a process mine accepts. It returns nil when one of that socket's
// holders is mine, and also whenever this host cannot tell: no /proc, addr
// is not an address of this host (a remote server, a container's network),
// or no socket here takes the connection. Otherwise it returns a
// *ForeignError naming the holder — the lowest pid holding the socket — or,
// when no holder is visible (another user's process, and this one is not
// root), the socket's owner. It looks at every process of the machine; a
// Vetter looks at the expected ones first, and remembers.
func Check(addr netip.AddrPort, mine func(pid int) bool) error {
	socks, _ := answering(addr)
	if len(socks) == 0 {
		return nil
	}
	return vet(addr, socks, inodesOf(socks), mine, nil)
}

// Vetter is Check for one set of processes (a service's) across repeated
// probes, as cheap as the platform allows when nothing changes:
//
//   - the sockets that answer the address are asked of the kernel for
//     that one port (Listening);
//   - their holder is looked for first among the processes own lists (the
//     service's own), and only when none of them holds a socket among
//     every process of the machine;
//   - a verdict that the sockets are mine's is remembered with their
//     inodes, and while the same sockets answer the address it stands
//     without looking at any process again. So is a verdict naming this
//     very process (a probe that went through the daemon's own proxy). A
//     verdict naming another holder is not remembered: the next probe
//     looks again.
//
// It is safe for concurrent use.
type Vetter struct {
	mine func(pid int) bool
	own  func() []int

	mu   sync.Mutex
	seen map[netip.AddrPort]vetted
}

// vetted is a verdict a Vetter remembers for one address.
type vetted struct {
	inodes []uint64 // the sockets it was about, ascending
	err    error    // nil, or a *ForeignError naming this process
}

// NewVetter makes a Vetter for the processes mine accepts; own, when not
// nil, lists the pids to look at first (cheaply: a process group, a
// cgroup's members).
func NewVetter(mine func(pid int) bool, own func() []int) *Vetter {
	return &Vetter{mine: mine, own: own, seen: map[netip.AddrPort]vetted{}}
}

// Check is Check(addr, mine), vetted again only when the sockets that
// answer addr are not those of the last verdict remembered for it.
func (v *Vetter) Check(addr netip.AddrPort) error { return v.check(addr, false) }

// CheckListening is Check, except that when this host can tell that no
// socket listens at addr it fails with a *NotListeningError instead of
// passing. The supervisor's probes use it: an answer on a connection kept
// alive from before proves nothing once the process has let go of its
// listener.
func (v *Vetter) CheckListening(addr netip.AddrPort) error { return v.check(addr, true) }

func (v *Vetter) check(addr netip.AddrPort, strict bool) error {
	socks, told := answering(addr)
	if len(socks) == 0 {
		if strict && told {
			return &NotListeningError{Addr: addr}
		}
		return nil
	}
	inodes := inodesOf(socks)
	v.mu.Lock()
	defer v.mu.Unlock()
	if last, ok := v.seen[addr]; ok && slices.Equal(last.inodes, inodes) {
		return last.err
	}
	err := vet(addr, socks, inodes, v.mine, v.own)
	var fe *ForeignError
	if err == nil || errors.As(err, &fe) && fe.Pid == os.Getpid() {
		v.seen[addr] = vetted{inodes: inodes, err: err}
	} else {
		delete(v.seen, addr)
	}
	return err
}

// answering is the listening sockets that take a connection to addr, when
// this host can tell: none for an address not of this host, a platform
// that cannot list its listeners, or a port nobody listens on.
// told is false when this host cannot tell (then socks is empty).
func answering(addr netip.AddrPort) (socks []Socket, told bool) {
	if !isLocal(addr.Addr()) {
		return nil, false
	}
	all, err := listeningFor(addr)
	if err != nil {
		return nil, false // cannot tell here: the answer is taken at its word
	}
	return Answering(all, addr), true
}

// inodesOf is the inodes of socks, ascending, each once.
func inodesOf(socks []Socket) []uint64 {
	inodes := make([]uint64, len(socks))
	for i, s := range socks {
		inodes[i] = s.Inode
	}
	slices.Sort(inodes)
	return slices.Compact(inodes)
}

// vet is Check's verdict on socks (inodes: theirs), the sockets that answer
// addr: their holders are looked for among own's pids first (when own is
// not nil), then among every process.
func vet(addr netip.AddrPort, socks []Socket, inodes []uint64, mine func(int) bool, own func() []int) error {
	if own != nil {
		if cand := own(); len(cand) > 0 {
			for _, pids := range HoldersAmong(cand, inodes...) {
				if slices.ContainsFunc(pids, mine) {
					return nil
				}
			}
		}
	}
	holders := Holders(inodes...)
	var pids []int
	for _, in := range inodes {
		pids = append(pids, holders[in]...)
	}
	slices.Sort(pids)
	pids = slices.Compact(pids)
	for _, pid := range pids {
		if mine(pid) {
			return nil
		}
	}
	if len(pids) > 0 {
		return &ForeignError{Port: int(addr.Port()), Pid: pids[0], Command: CommandLine(pids[0])}
	}
	for _, s := range socks {
		if s.UID != os.Geteuid() {
			return &ForeignError{Port: int(addr.Port()), UID: s.UID}
		}
	}
	// This user's socket, yet no process of this user holds it where we can
	// see (another pid namespace, or it is being closed): cannot tell.
	return nil
}

// Holder names the process listening on TCP port, on any address: the
// lowest pid holding one of its listening sockets, as Describe shows it. It
// returns "" when the port is not held, the holder is not visible to this
// user, or this platform cannot tell.
func Holder(port int) string {
	if pid := HolderPid(port); pid != 0 {
		return Describe(pid)
	}
	return ""
}

// HolderPid is the pid Holder names, or 0.
func HolderPid(port int) int {
	socks, err := Listening(port)
	if err != nil || len(socks) == 0 {
		return 0
	}
	inodes := make([]uint64, len(socks))
	for i, s := range socks {
		inodes[i] = s.Inode
	}
	best := 0
	for _, pids := range Holders(inodes...) {
		for _, pid := range pids {
			if best == 0 || pid < best {
				best = pid
			}
		}
	}
	return best
}

// isLocal reports whether a is an address of this host: loopback,
// unspecified (a connection to 0.0.0.0 reaches this host), or one of its
// interfaces' addresses.
func isLocal(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return true
			}
		}
	}
	return false
}
