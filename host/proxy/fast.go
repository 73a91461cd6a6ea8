package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// The fast path forwards the common request, a bodiless GET, HEAD or
// OPTIONS over HTTP/1.x without Upgrade, on a kept-alive backend connection
// from the serving goroutine itself: request written, response read and
// copied, connection back in the pool. httputil.ReverseProxy and
// http.Transport hand every request between three goroutines (the handler,
// the connection's write loop and its read loop) and clone the request;
// on a loopback backend that hand-off is a large part of what the proxy
// adds. Everything else (bodies, upgrades and WebSockets, HTTP/2 clients)
// still goes through the ReverseProxy in forward.go.

const (
	// fastIdlePerTarget bounds the idle connections kept per backend.
	fastIdlePerTarget = 128
	// fastIdleTimeout closes connections idle this long (the sweep runs
	// as often), before a backend's own idle timeout would.
	fastIdleTimeout = 30 * time.Second
)

// backendConn is one kept-alive connection to a backend.
type backendConn struct {
	c    net.Conn
	rw   io.ReadWriter // c, or its raw socket I/O (sockio.go)
	br   *bufio.Reader // nil while idle
	bw   *bufio.Writer // nil while idle
	used time.Time     // when it went back to the pool
}

// connPool holds a backend's idle connections, newest last.
type connPool struct {
	target string
	mu     sync.Mutex
	idle   []*backendConn
	closed bool
}

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8<<10) }}
)

// sweepIdle closes the idle connections of every route's pool that have
// waited fastIdleTimeout, until ctx ends.
func (p *Proxy) sweepIdle(ctx context.Context) {
	t := time.NewTicker(fastIdleTimeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, e := range p.table.Load().hosts {
				e.forward.pool.sweep(now.Add(-fastIdleTimeout))
			}
		}
	}
}

func (cp *connPool) get() *backendConn {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if n := len(cp.idle); n > 0 {
		bc := cp.idle[n-1]
		cp.idle[n-1] = nil
		cp.idle = cp.idle[:n-1]
		return bc
	}
	return nil
}

func (cp *connPool) put(bc *backendConn) {
	if bc.br.Buffered() > 0 {
		bc.close() // the backend sent more than its answer
		return
	}
	bc.detach()
	bc.used = time.Now()
	cp.mu.Lock()
	if !cp.closed && len(cp.idle) < fastIdlePerTarget {
		cp.idle = append(cp.idle, bc)
		cp.mu.Unlock()
		return
	}
	cp.mu.Unlock()
	bc.close()
}

// sweep closes connections idle since before cutoff; all of them when
// cutoff is zero, and then the pool takes no more.
func (cp *connPool) sweep(cutoff time.Time) {
	cp.mu.Lock()
	var old []*backendConn
	keep := cp.idle[:0]
	for _, bc := range cp.idle {
		if cutoff.IsZero() || bc.used.Before(cutoff) {
			old = append(old, bc)
		} else {
			keep = append(keep, bc)
		}
	}
	clear(cp.idle[len(keep):])
	cp.idle = keep
	if cutoff.IsZero() {
		cp.closed = true
	}
	cp.mu.Unlock()
	for _, bc := range old {
		bc.close()
	}
}

// newBackendConn wraps a new connection to a backend.
func newBackendConn(c net.Conn) *backendConn {
	return &backendConn{c: c, rw: connIO(c, newSockIO(c))}
}

func (bc *backendConn) close() {
	_ = bc.c.Close()
	bc.detach()
}

// attach gives bc buffers from the shared pools for one exchange; detach
// returns them, so an idle connection holds only its socket.
func (bc *backendConn) attach() {
	bc.br = readerPool.Get().(*bufio.Reader)
	bc.br.Reset(bc.rw)
	bc.bw = writerPool.Get().(*bufio.Writer)
	bc.bw.Reset(bc.rw)
}

func (bc *backendConn) detach() {
	if bc.br != nil {
		bc.br.Reset(nil)
		readerPool.Put(bc.br)
		bc.bw.Reset(nil)
		writerPool.Put(bc.bw)
		bc.br, bc.bw = nil, nil
	}
}

// fastEligible reports whether r may take the fast path.
func fastEligible(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		return false
	}
	return r.ProtoMajor == 1 && r.ContentLength == 0 && len(r.TransferEncoding) == 0 &&
		r.Header["Upgrade"] == nil && r.Header["Expect"] == nil
}

// errFastStale is a reused connection that failed before any response
// byte: the backend closed it while idle, and the request is retried once.
var errFastStale = errors.New("kept-alive backend connection was closed")

// serveFast forwards r on a pooled connection.
func (p *Proxy) serveFast(f *forwarder, w http.ResponseWriter, r *http.Request) {
	for attempt := 0; ; attempt++ {
		bc, reused := f.pool.get(), true
		if bc == nil {
			c, err := p.dialer.DialContext(r.Context(), "tcp", f.pool.target)
			if err != nil {
				p.forwardError(w, r, err)
				return
			}
			bc, reused = newBackendConn(c), false
		}
		bc.attach()
		err := p.roundTripFast(f.pool, bc, w, r)
		if err == nil {
			return
		}
		if errors.Is(err, errFastStale) && reused && attempt == 0 {
			continue
		}
		p.forwardError(w, r, err)
		return
	}
}

// roundTripFast sends r on bc and copies the response to w. It returns an
// error only when nothing has been written to w yet; bc is pooled again or
// closed.
func (p *Proxy) roundTripFast(cp *connPool, bc *backendConn, w http.ResponseWriter, r *http.Request) error {
	// A client that goes away, or a proxy that closes, ends the exchange.
	stop := context.AfterFunc(r.Context(), func() { _ = bc.c.SetDeadline(time.Unix(1, 0)) })
	ok := false
	defer func() {
		// stop reports true when the deadline was never set.
		if !stop() || !ok {
			bc.close()
			return
		}
		cp.put(bc)
	}()
	writeRequest(bc.bw, r)
	if err := bc.bw.Flush(); err != nil {
		return errors.Join(errFastStale, err)
	}
	var resp *http.Response
	for {
		var err error
		resp, err = http.ReadResponse(bc.br, r)
		if err != nil {
			if r.Context().Err() != nil {
				return r.Context().Err()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
				return errors.Join(errFastStale, err)
			}
			return err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// 1xx (103 Early Hints…): pass it on and read the real answer.
		h := w.Header()
		copyHeader(h, resp.Header)
		w.WriteHeader(resp.StatusCode)
		for k := range resp.Header {
			delete(h, k)
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Nobody asked to upgrade: a backend that does is broken.
		return errors.New("backend switched protocols unasked")
	}
	h := w.Header()
	removeHopHeaders(resp.Header)
	copyHeader(h, resp.Header)
	if len(resp.Trailer) > 0 {
		names := make([]string, 0, len(resp.Trailer))
		for k := range resp.Trailer {
			names = append(names, k)
		}
		h["Trailer"] = []string{strings.Join(names, ", ")}
	}
	w.WriteHeader(resp.StatusCode)
	buf := p.buffers.Get()
	err := copyBody(w, resp, buf)
	p.buffers.Put(buf)
	if err != nil {
		// The status line is out; all that can be done is to stop. The
		// server ends the client's connection on the short body.
		if r.Context().Err() == nil {
			p.log.Debug("copy from backend failed", "host", r.Host, "error", err)
		}
		panic(http.ErrAbortHandler)
	}
	for k, vv := range resp.Trailer {
		h[http.TrailerPrefix+k] = vv
	}
	ok = !resp.Close
	return nil
}

// copyBody copies the response body, flushing after every read when the
// response streams (no length, or text/event-stream), as ReverseProxy does.
func copyBody(w http.ResponseWriter, resp *http.Response, buf []byte) error {
	defer resp.Body.Close()
	stream := resp.ContentLength == -1 || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	fl, _ := w.(http.Flusher)
	if !stream || fl == nil {
		_, err := io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, buf)
		return err
	}
	fl.Flush()
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			fl.Flush()
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// hopHeaders are the connection's own headers (RFC 9110 section 7.6.1);
// they are never forwarded.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// isHop reports whether the canonical header k is hop-by-hop, or is named in
// the message's Connection header.
func isHop(k string, conn []string) bool {
	for _, h := range hopHeaders {
		if k == h {
			return true
		}
	}
	for _, v := range conn {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" && http.CanonicalHeaderKey(f) == k {
				return true
			}
		}
	}
	return false
}

func removeHopHeaders(h http.Header) {
	conn := h["Connection"]
	for k := range h {
		if isHop(k, conn) {
			delete(h, k)
		}
	}
}

// copyHeader adds src's values to dst. src is a response the proxy read and
// gives away, so its slices are taken over rather than copied.
func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		if old := dst[k]; old != nil {
			dst[k] = append(old, vv...)
		} else {
			dst[k] = vv
		}
	}
}

// forwardedHeaders are replaced with the proxy's own, as
// httputil.ProxyRequest.SetXForwarded does.
var forwardedHeaders = [...]string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// isForwarded reports whether the canonical header k is one of them.
func isForwarded(k string) bool {
	for _, h := range forwardedHeaders {
		if k == h {
			return true
		}
	}
	return false
}

// writeRequest writes r as an HTTP/1.1 request with the hop-by-hop headers
// removed and X-Forwarded-For, -Host and -Proto set, as forward.go's
// Rewrite does for the ReverseProxy.
func writeRequest(bw *bufio.Writer, r *http.Request) {
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	bw.WriteString(r.URL.RequestURI())
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(r.Host)
	bw.WriteString("\r\n")
	conn := r.Header["Connection"]
	for k, vv := range r.Header {
		if isForwarded(k) || (isHop(k, conn) && !(k == "Te" && teTrailers(vv))) {
			continue
		}
		for _, v := range vv {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		bw.WriteString("X-Forwarded-For: ")
		bw.WriteString(ip)
		bw.WriteString("\r\n")
	}
	bw.WriteString("X-Forwarded-Host: ")
	bw.WriteString(r.Host)
	if r.TLS != nil {
		bw.WriteString("\r\nX-Forwarded-Proto: https\r\n\r\n")
	} else {
		bw.WriteString("\r\nX-Forwarded-Proto: http\r\n\r\n")
	}
}

// teTrailers is "TE: trailers", the one TE value a proxy passes on.
func teTrailers(vv []string) bool {
	for _, v := range vv {
		if strings.EqualFold(textproto.TrimString(v), "trailers") {
			return true
		}
	}
	return false
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "read"
}
