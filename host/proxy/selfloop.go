package proxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
)

// errSelfTarget is a dial refused because its address is one of the
// proxy's own listeners: the request would come back to the proxy, which
// would forward it to itself again, a connection and a goroutine a hop,
// until the process ran out of descriptors and no world's name answered.
var errSelfTarget = errors.New("the address is Binky's proxy itself")

// addSelf records the address of a listener the proxy serves on.
// Callers hold p.mu.
func (p *Proxy) addSelf(ln net.Listener) {
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return
	}
	ap := a.AddrPort()
	old := p.self.Load()
	next := []netip.AddrPort{ap}
	if old != nil {
		next = append(append([]netip.AddrPort(nil), (*old)...), ap)
	}
	p.self.Store(&next)
}

// refuseSelf is the dialer's Control: it refuses to connect to one of
// the proxy's own listeners (address is the resolved ip:port).
func (p *Proxy) refuseSelf(_ context.Context, _, address string, _ syscall.RawConn) error {
	self := p.self.Load()
	if self == nil {
		return nil
	}
	to, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil
	}
	if isSelf(*self, to) {
		return errSelfTarget
	}
	return nil
}

// isSelf reports whether a connection to to reaches one of the listeners
// self: the same port, and the same address, or a listener on every
// address and a target on this machine's loopback or unspecified one.
func isSelf(self []netip.AddrPort, to netip.AddrPort) bool {
	ip := to.Addr().Unmap()
	for _, s := range self {
		if s.Port() != to.Port() {
			continue
		}
		sip := s.Addr().Unmap()
		if sip == ip || sip.IsUnspecified() && (ip.IsLoopback() || ip.IsUnspecified()) || ip.IsUnspecified() && sip.IsLoopback() {
			return true
		}
	}
	return false
}
