package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"
)

// The front reads each request on a plain-HTTP connection before net/http
// does. The common request, a bodiless GET, HEAD or OPTIONS over HTTP/1.1
// for a running world, it relays itself: the request head is checked
// strictly from the connection's buffer, rewritten (hop-by-hop headers out,
// X-Forwarded-* in) onto a pooled backend connection, and the response
// head and body are copied back as they come. net/http's server costs a
// Request, a header map, a URL, contexts and a background read per
// request; this path costs none of them (benchmarks/README.md).
//
// Anything else is handed, unread, to net/http on the same connection and
// stays there: a body, Upgrade, Expect, chunked or any unusual header, a
// head split over more than the buffer, HTTP/1.0, a Host that is not a
// running world (the listing, 421, the wake and unavailable pages), and any
// failure before the backend's response head arrived (the request is still
// in the buffer, and these methods are idempotent). So every refusal and
// error page is net/http's and the ReverseProxy's, as before.

const (
	// frontHeadMax is the largest request head the front reads; larger
	// ones go to net/http.
	frontHeadMax = 4 << 10
	// frontHeaders is the most header lines the front takes.
	frontHeaders = 64
	// respHeadMax is the largest response head the front relays.
	respHeadMax = 16 << 10
)

// handoff is the listener net/http serves: the connections the front gives
// up on.
type handoff struct {
	addr   net.Addr
	ch     chan net.Conn
	done   chan struct{}
	closer sync.Once
}

func newHandoff(addr net.Addr) *handoff {
	return &handoff{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.ch:
		return c, nil
	case <-h.done:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error { h.closer.Do(func() { close(h.done) }); return nil }

func (h *handoff) Addr() net.Addr { return h.addr }

// give hands c to net/http; false when the server is gone.
func (h *handoff) give(c net.Conn) bool {
	select {
	case h.ch <- c:
		return true
	case <-h.done:
		return false
	}
}

// bufConn is a connection whose first bytes are already in r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// frontConns tracks the connections the front serves, to close them on
// Close.
type frontConns struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

func (fc *frontConns) add(c net.Conn) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.closed {
		return false
	}
	if fc.m == nil {
		fc.m = map[net.Conn]struct{}{}
	}
	fc.m[c] = struct{}{}
	return true
}

func (fc *frontConns) remove(c net.Conn) {
	fc.mu.Lock()
	delete(fc.m, c)
	fc.mu.Unlock()
}

func (fc *frontConns) closeAll() {
	fc.mu.Lock()
	fc.closed = true
	conns := fc.m
	fc.m = nil
	fc.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// frontWorkerIdle is how long a front goroutine with nothing to serve
// waits for a new connection before it ends.
const frontWorkerIdle = 10 * time.Second

// acceptFront accepts on ln until it closes, serving each connection with
// front and handing what it does not take to h.
//
// A connection is given to a front goroutine that finished its last one
// and waits (frontWorker), else to a new one. A new goroutine per
// connection starts on a small stack and grows it, copying, on the way
// into the exchange (the request head's parse, the relay), and a new
// connection's buffer is garbage when it closes; a waiting goroutine has
// both already. With a new connection per request (curl in a loop, a
// browser's short connections) that was the proxy's largest cost after the
// socket calls.
func (p *Proxy) acceptFront(ln net.Listener, h *handoff, done <-chan struct{}) {
	idle := make(chan net.Conn) // unbuffered: a send succeeds only when a worker waits
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			p.log.Warn("proxy accept", "error", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if !p.fronts.add(c) {
			c.Close()
			return
		}
		select {
		case idle <- c:
		default:
			p.wg.Add(1)
			go p.frontWorker(c, h, idle, done)
		}
	}
}

// frontWorker serves c, then each connection acceptFront gives it on idle,
// until it has waited frontWorkerIdle for one or done closes. It keeps its
// read buffer from one connection to the next, unless a connection went to
// net/http with it.
func (p *Proxy) frontWorker(c net.Conn, h *handoff, idle <-chan net.Conn, done <-chan struct{}) {
	defer p.wg.Done()
	var br *bufio.Reader
	var sio *sockIO
	var wait *time.Timer
	for {
		if sio == nil || !sio.reset(c) {
			sio = newSockIO(c)
		}
		rw := connIO(c, sio)
		if br == nil {
			br = bufio.NewReaderSize(rw, frontHeadMax)
		} else {
			br.Reset(rw)
		}
		if p.front(c, rw, br, h) {
			br, sio = nil, nil // net/http reads c through them now
		} else {
			br.Reset(nil)
		}
		if wait == nil {
			wait = time.NewTimer(frontWorkerIdle)
		} else {
			wait.Reset(frontWorkerIdle)
		}
		select {
		case c = <-idle:
		case <-wait.C:
			return
		case <-done:
			wait.Stop()
			return
		}
	}
}

// front serves c's requests, read through br, until one is not for it,
// then hands c to h. Answers are written to cw (c, or its raw socket I/O).
// kept reports that c went to h, br with it.
func (p *Proxy) front(c net.Conn, cw io.Writer, br *bufio.Reader, h *handoff) (kept bool) {
	defer func() {
		p.fronts.remove(c)
		if !kept {
			c.Close()
		}
	}()
	for {
		// As net/http: 2 minutes idle between requests, then 10 seconds
		// for the rest of a head once it began. The front never reads c
		// while it relays an answer, and net/http sets its own deadlines
		// on what it is handed, so the deadline is not cleared.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if _, err := br.Peek(1); err != nil {
			return false // the client closed, or idled out
		}
		if !headBuffered(br) {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		}
		head, err := peekHead(br, frontHeadMax)
		if err != nil {
			return false
		}
		var fr frontRequest
		var e *entry
		if head != nil && parseFront(head, &fr) {
			if host, ok := normalizeHost(fr.host); ok && host != p.dashHost {
				if e = p.table.Load().hosts[host]; e != nil && (e.route.State != StateRunning || e.route.BrowserLogs && frontBrowser(&fr)) {
					e = nil
				}
			}
		}
		if e == nil {
			return h.give(&bufConn{Conn: c, r: br})
		}
		p.served.Add(1)
		p.touchEntry(e)
		e.live.begin()
		done, keep := p.frontExchange(c, cw, br, head, &fr, e)
		e.live.end()
		if !done {
			return h.give(&bufConn{Conn: c, r: br})
		}
		if !keep {
			return false
		}
	}
}

// frontExchange relays fr to e's backend and the answer back to c. done is
// false when nothing was consumed from br nor written to c (net/http then
// takes the connection, request and all); keep says c may serve another
// request.
func (p *Proxy) frontExchange(c net.Conn, cw io.Writer, br *bufio.Reader, head []byte, fr *frontRequest, e *entry) (done, keep bool) {
	cp := e.forward.pool
	for attempt := 0; attempt < 2; attempt++ {
		bc, reused := cp.get(), true
		if bc == nil {
			if attempt > 0 {
				return false, false
			}
			bcNew, err := p.dialer.Dial("tcp", cp.target)
			if err != nil {
				return false, false // net/http dials again and shows the error page
			}
			bc, reused = newBackendConn(bcNew), false
		}
		// Close ends the exchange too: a backend that takes its time (a
		// long poll) must not hold the proxy's shutdown.
		if !p.fronts.add(bc.c) {
			bc.close()
			return false, false
		}
		bc.attach()
		rh, err := p.frontSend(c, bc, fr)
		if err != nil {
			p.fronts.remove(bc.c)
			bc.close()
			if reused && attempt == 0 && (errors.Is(err, errFastStale) || errors.Is(err, io.EOF) || isReset(err)) {
				continue // a kept-alive connection the backend closed while idle
			}
			return false, false
		}
		// The answer is here: the request is ours now.
		_, _ = br.Discard(len(head))
		keep, ok := p.frontRelay(c, cw, br, bc, fr, rh)
		p.fronts.remove(bc.c)
		if ok {
			cp.put(bc)
		} else {
			bc.close()
		}
		return true, keep
	}
	return false, false
}

// frontSend writes fr on bc and reads the backend's response head. It
// writes nothing to c: a 1xx is an error, for net/http to redo the
// exchange.
func (p *Proxy) frontSend(c net.Conn, bc *backendConn, fr *frontRequest) (*respHead, error) {
	bw := bc.bw
	bw.Write(fr.line)
	bw.WriteString("\r\nHost: ")
	bw.WriteString(fr.host)
	bw.WriteString("\r\n")
	for _, l := range fr.lines[:fr.n] {
		bw.Write(l)
		bw.WriteString("\r\n")
	}
	writeForwardedFor(bw, c.RemoteAddr())
	bw.WriteString("X-Forwarded-Host: ")
	bw.WriteString(fr.host)
	bw.WriteString("\r\nX-Forwarded-Proto: http\r\n\r\n")
	if err := bw.Flush(); err != nil {
		return nil, errors.Join(errFastStale, err)
	}
	rh, err := readRespHead(bc.br)
	if err != nil {
		return nil, err
	}
	if rh.status < 200 {
		// 1xx: a 101 nobody asked for is broken; anything else (103)
		// could be passed on, but then the exchange is no longer the
		// front's to give back. Let net/http do it.
		return nil, errors.New("informational response")
	}
	return rh, nil
}

// writeForwardedFor writes the X-Forwarded-For line of a client at a: its
// IP as net.SplitHostPort of a.String() gives it, without the string.
func writeForwardedFor(bw *bufio.Writer, a net.Addr) {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			bw.WriteString("X-Forwarded-For: ")
			bw.Write(ip.Unmap().WithZone(ta.Zone).AppendTo(bw.AvailableBuffer()))
			bw.WriteString("\r\n")
		}
		return
	}
	if ip, _, err := net.SplitHostPort(a.String()); err == nil {
		bw.WriteString("X-Forwarded-For: ")
		bw.WriteString(ip)
		bw.WriteString("\r\n")
	}
}

// frontRelay writes the response head (hop-by-hop headers out) and body to
// c, through cw. keep says c may serve another request; ok says bc may be reused.
// The request is out of br: a streamed body is relayed while br is
// watched for the client's close (watchClient).
func (p *Proxy) frontRelay(c net.Conn, cw io.Writer, br *bufio.Reader, bc *backendConn, fr *frontRequest, rh *respHead) (keep, ok bool) {
	noBody := fr.head || rh.status == http.StatusNoContent || rh.status == http.StatusNotModified
	untilEOF := !noBody && !rh.chunk && rh.length < 0
	keep = !fr.close && !untilEOF
	buf := p.buffers.Get()
	defer p.buffers.Put(buf)
	out := appendRespHead(buf[:0], rh, !keep)
	// No body, or a small one already in the buffer: the answer goes out
	// whole, in one write, and on a connection that ends with it, with the
	// end (writeFinal).
	whole := noBody
	if !noBody && !rh.chunk && rh.length >= 0 && rh.length <= int64(bc.br.Buffered()) && len(out)+int(rh.length) <= cap(out) {
		body, _ := bc.br.Peek(int(rh.length))
		out = append(out, body...)
		_, _ = bc.br.Discard(int(rh.length))
		whole = true
	}
	if whole {
		var err error
		if keep {
			_, err = cw.Write(out)
		} else {
			err = writeFinal(c, out)
		}
		if err != nil {
			return false, !rh.close
		}
		return keep, !rh.close
	}
	if _, err := cw.Write(out); err != nil {
		return false, false
	}
	var err error
	switch {
	case noBody:
	case rh.chunk:
		stop := watchClient(c, br, bc)
		err = relayChunked(cw, bc.br, buf)
		if stop() {
			return false, false
		}
	case rh.length >= 0:
		var n int64
		n, err = io.CopyBuffer(cw, io.LimitReader(bc.br, rh.length), buf)
		if err == nil && n < rh.length {
			err = io.ErrUnexpectedEOF // the backend closed inside the body
		}
	default:
		// Until the backend closes; then the client's connection ends too.
		stop := watchClient(c, br, bc)
		_, _ = io.CopyBuffer(cw, bc.br, buf)
		stop()
		return false, false
	}
	if err != nil {
		return false, false
	}
	return keep, !rh.close
}

// watchClient ends the relay from bc when the client closes c while a
// streamed body (chunked, or until the backend closes) goes out: an event
// stream or long poll whose client left would otherwise wait for the
// backend's next write, holding the backend connection and counting as
// open (Activity). A streamed body is the one relay that may wait on the
// backend for long; the others do not watch. stop ends the watch before
// br is read again and reports whether the client closed.
func watchClient(c net.Conn, br *bufio.Reader, bc *backendConn) (stop func() bool) {
	done := make(chan struct{})
	closed := false
	go func() {
		defer close(done)
		if _, err := br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			closed = true
			_ = bc.c.SetDeadline(time.Unix(1, 0))
		}
		// Bytes from the client (a pipelined request) stay in br.
	}()
	return func() bool {
		_ = c.SetReadDeadline(time.Unix(1, 0))
		<-done
		_ = c.SetReadDeadline(time.Time{})
		return closed
	}
}

// relayChunked copies one chunked body (through its trailer section) from
// br to w as it is, chunk by chunk, so a stream stays a stream.
func relayChunked(w io.Writer, br *bufio.Reader, buf []byte) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, ok := chunkSize(line)
		if !ok {
			return errors.New("malformed chunk size")
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if size == 0 {
			// Trailer lines, then the blank line.
			for {
				tl, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if _, err := w.Write(tl); err != nil {
					return err
				}
				if len(tl) <= 2 {
					return nil
				}
			}
		}
		if _, err := io.CopyBuffer(w, io.LimitReader(br, size+2), buf); err != nil {
			return err
		}
	}
}
