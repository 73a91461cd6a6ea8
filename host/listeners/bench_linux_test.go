//go:build linux

package listeners

import (
	"net"
	"net/netip"
	"os"
	"testing"
)

// benchListener is a listener of this process and the address a probe of
// it reaches.
func benchListener(b *testing.B) netip.AddrPort {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(l.Addr().(*net.TCPAddr).Port))
}

// BenchmarkCheckMachineWide is what every periodic probe paid before issue
// 44: all of /proc/net/tcp{,6}, then every descriptor of every process.
func BenchmarkCheckMachineWide(b *testing.B) {
	addr := benchListener(b)
	for b.Loop() {
		socks, err := procListening(int(addr.Port()))
		if err != nil {
			b.Fatal(err)
		}
		if len(Holders(inodesOf(Answering(socks, addr))...)) != 1 {
			b.Fatal("no holder found")
		}
	}
}

// BenchmarkVetterFirst is a Vetter's first look at a socket: sock_diag for
// the port, then the service's own descriptors.
func BenchmarkVetterFirst(b *testing.B) {
	addr := benchListener(b)
	self := os.Getpid()
	for b.Loop() {
		if err := NewVetter(func(p int) bool { return p == self }, func() []int { return []int{self} }).Check(addr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVetterSteady is a periodic probe of a service that kept its
// listener: one sock_diag round trip.
func BenchmarkVetterSteady(b *testing.B) {
	addr := benchListener(b)
	self := os.Getpid()
	v := NewVetter(func(p int) bool { return p == self }, func() []int { return []int{self} })
	for b.Loop() {
		if err := v.Check(addr); err != nil {
			b.Fatal(err)
		}
	}
}
