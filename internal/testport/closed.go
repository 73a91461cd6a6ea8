package testport

import (
	"net"
	"strconv"
	"testing"
)

// Closed returns "127.0.0.1:<port>" where a connection is refused: a TCP
// socket holds the port, bound and not listening, until t's cleanup.
func Closed(t testing.TB) string {
	t.Helper()
	port, release, err := bindOnly()
	if err != nil {
		t.Fatalf("hold a closed loopback port: %v", err)
	}
	t.Cleanup(release)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
