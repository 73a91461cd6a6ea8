package testport

import (
	"net"
	"testing"
	"time"
)

// TestClosedRefusesAndIsHeld: a connection to the address is refused, and
// a hundred listens on port 0 meanwhile are never handed its port.
func TestClosedRefusesAndIsHeld(t *testing.T) {
	addr := Closed(t)
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("a connection to %s was accepted; want it refused", addr)
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().String()
		l.Close()
		if got == addr {
			t.Fatalf("a listen on port 0 was handed %s, which Closed holds", addr)
		}
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listen on %s succeeded; want it refused while Closed holds it", addr)
	}
}
