package proxy

import (
	"io"
	"net"
	"os"
	"syscall"
)

// sockIO reads and writes one TCP socket with raw system calls, parking in
// the netpoller (through the connection's syscall.RawConn, deadlines and
// Close included) only when the socket is not ready.
//
// A read or write on a nonblocking loopback socket never blocks: it
// returns in microseconds, data or EAGAIN. net.Conn's Read and Write still
// tell the scheduler each may block (entersyscall): the runtime's monitor
// then wakes every 20 µs while a P sits in one, hands that P to another
// thread when the call outlasts a tick (a loopback write runs the
// receiver's side of TCP too), and is woken again from its long sleep by
// the next call. On the front's kept-alive path, four such calls a
// request, that churn was about a tenth of the daemon's CPU per request
// on a single core (benchmarks/README.md). Raw calls keep the P: none of
// it happens.
type sockIO struct {
	rc syscall.RawConn
	// The caller's buffer, what was done and the error, for the
	// callbacks: one set for reads and one for writes, which may run at
	// once (watchClient reads while the relay writes).
	rp, wp         []byte
	rn, wn         int
	rerrno, werrno syscall.Errno
	// readFn and writeFn are the callbacks, bound once: a closure made
	// per call would be allocated per call.
	readFn, writeFn func(fd uintptr) bool
}

// newSockIO is c's raw reader and writer, or nil when c is not a TCP
// connection (the caller then uses c itself).
func newSockIO(c net.Conn) *sockIO {
	s := &sockIO{}
	s.readFn, s.writeFn = s.read, s.write
	if !s.reset(c) {
		return nil
	}
	return s
}

// reset points s at c, for a front goroutine's next connection; false when
// c is not a TCP connection.
func (s *sockIO) reset(c net.Conn) bool {
	s.rc = nil
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	s.rc = rc
	return true
}

// Read reads what the socket has, waiting for some when it has none; an
// error is as net.Conn's: io.EOF at the end, a *net.OpError otherwise.
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerrno = p, 0, 0
	err := s.rc.Read(s.readFn)
	s.rp = nil
	switch {
	case err != nil:
		return 0, err
	case s.rerrno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", s.rerrno)}
	case s.rn == 0:
		return 0, io.EOF
	}
	return s.rn, nil
}

func (s *sockIO) read(fd uintptr) bool {
	for {
		n, e := rawRead(fd, s.rp)
		switch e {
		case 0:
			s.rn = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // park until readable
		}
		s.rerrno = e
		return true
	}
}

// Write writes all of p, waiting for room when the socket has none.
func (s *sockIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wp, s.wn, s.werrno = p, 0, 0
	err := s.rc.Write(s.writeFn)
	s.wp = nil
	if err == nil && s.werrno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", s.werrno)}
	}
	return s.wn, err
}

func (s *sockIO) write(fd uintptr) bool {
	for s.wn < len(s.wp) {
		n, e := rawWrite(fd, s.wp[s.wn:])
		switch e {
		case 0:
			s.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // park until writable, then write the rest
		default:
			s.werrno = e
			return true
		}
	}
	return true
}
