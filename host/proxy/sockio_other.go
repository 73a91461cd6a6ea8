//go:build !linux

package proxy

import (
	"io"
	"net"
)

// sockIO is Linux's raw socket I/O (sockio_linux.go); elsewhere the
// connection's own Read and Write serve.
type sockIO struct{ io.ReadWriter }

func newSockIO(net.Conn) *sockIO { return nil }

func (s *sockIO) reset(net.Conn) bool { return false }
