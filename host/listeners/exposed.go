package listeners

import (
	"fmt"
	"slices"
)

// Exposed returns the sockets of socks listening on one of ports at an
// address other than loopback: a wildcard (0.0.0.0, ::) or an address of
// an interface, so reachable from other machines. A world's services are
// meant for this machine: binky proxies them from 127.0.0.1.
func Exposed(socks []Socket, ports ...int) []Socket {
	var out []Socket
	for _, s := range socks {
		if !slices.Contains(ports, int(s.Addr.Port())) || s.Addr.Addr().Unmap().IsLoopback() {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ExposedWarning is the sentence status shows for a service that listens
// beyond loopback, with what to do; "" when socks (Exposed's answer) is
// empty.
func ExposedWarning(socks []Socket) string {
	if len(socks) == 0 {
		return ""
	}
	return ExposedSentence(socks[0]) + "; bind it to 127.0.0.1 (a framework that reads $PORT as \"every interface\": env = { PORT = \"\" } and pass ${self.port} as its address)"
}

// ExposedSentence says where s listens and why it matters.
func ExposedSentence(s Socket) string {
	where := s.Addr.Addr().Unmap().String()
	if s.Addr.Addr().IsUnspecified() {
		where += " (every interface)"
	}
	return fmt.Sprintf("listens on %s port %d, not only on loopback: other machines can reach it", where, s.Addr.Port())
}
