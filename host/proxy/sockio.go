package proxy

import (
	"io"
	"net"
)

// connIO is what the front and the pooled backend connections read and
// write c through: its raw socket I/O (sockIO) when it has one, else c.
func connIO(c net.Conn, s *sockIO) io.ReadWriter {
	if s == nil {
		return c
	}
	return s
}
