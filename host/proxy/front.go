package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
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

// acceptFront accepts on ln until it closes, serving each connection with
// front and handing what it does not take to h.
func (p *Proxy) acceptFront(ln net.Listener, h *handoff) {
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
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.front(c, h)
		}()
	}
}

// front serves c's requests until one is not for it, then hands c to h.
func (p *Proxy) front(c net.Conn, h *handoff) {
	br := bufio.NewReaderSize(c, frontHeadMax)
	kept := false
	defer func() {
		p.fronts.remove(c)
		if !kept {
			c.Close()
		}
	}()
	for {
		// As net/http: 2 minutes idle between requests, then 10 seconds
		// for the rest of a head once it began.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if _, err := br.Peek(1); err != nil {
			return // the client closed, or idled out
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		head, err := peekHead(br, frontHeadMax)
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		var fr frontRequest
		var e *entry
		if head != nil && parseFront(head, &fr) {
			if host, ok := normalizeHost(fr.host); ok && isLocalhost(host) && host != p.dashHost {
				if e = p.table.Load().hosts[host]; e != nil && e.route.State != StateRunning {
					e = nil
				}
			}
		}
		if e == nil {
			kept = h.give(&bufConn{Conn: c, r: br})
			return
		}
		p.served.Add(1)
		p.touchEntry(e)
		done, keep := p.frontExchange(c, br, head, &fr, e)
		if !done {
			kept = h.give(&bufConn{Conn: c, r: br})
			return
		}
		if !keep {
			return
		}
	}
}

// peekHead waits for a request head in br and returns it (through the blank
// line) without consuming it; nil when it does not fit in max bytes or the
// connection ends inside it. An error means nothing arrived.
func peekHead(br *bufio.Reader, max int) ([]byte, error) {
	if _, err := br.Peek(1); err != nil {
		return nil, err
	}
	for {
		buf, _ := br.Peek(br.Buffered())
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			return buf[:i+4], nil
		}
		if len(buf) >= max {
			return nil, nil
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			return nil, nil // let net/http answer what there is
		}
	}
}

// frontRequest is what the front needs of a request head.
type frontRequest struct {
	line  []byte // "GET /path HTTP/1.1"
	host  string
	close bool // Connection: close
	head  bool // HEAD: the response has no body
	// lines are the header lines to forward, each without its CRLF.
	lines [frontHeaders][]byte
	n     int
}

// parseFront checks head strictly and fills fr. It says no to anything it
// does not fully understand, for net/http to handle: it must never accept a
// request net/http would read differently (FuzzFrontAgreesWithNetHTTP).
func parseFront(head []byte, fr *frontRequest) bool {
	*fr = frontRequest{}
	i := bytes.Index(head, []byte("\r\n"))
	if i < 0 {
		return false
	}
	line := head[:i]
	rest := head[i+2:]
	// Request line: METHOD SP /target SP HTTP/1.1
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 < 0 {
		return false
	}
	switch string(line[:sp1]) {
	case "GET":
	case "HEAD":
		fr.head = true
	case "OPTIONS":
	default:
		return false
	}
	target := line[sp1+1:]
	sp2 := bytes.IndexByte(target, ' ')
	if sp2 <= 0 || string(target[sp2+1:]) != "HTTP/1.1" {
		return false
	}
	target = target[:sp2]
	if target[0] != '/' || (len(target) > 1 && target[1] == '/') {
		return false
	}
	for k, c := range target {
		if c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
		// A % must begin an escape: net/http answers "/a%zz" with 400.
		if c == '%' && (k+2 >= len(target) || !isHex(target[k+1]) || !isHex(target[k+2])) {
			return false
		}
	}
	fr.line = line
	hosts := 0
	for len(rest) > 2 { // the head ends with the blank line's CRLF
		j := bytes.Index(rest, []byte("\r\n"))
		if j <= 0 {
			return false
		}
		hl := rest[:j]
		rest = rest[j+2:]
		colon := bytes.IndexByte(hl, ':')
		if colon <= 0 {
			return false
		}
		name := hl[:colon]
		for _, c := range name {
			if !isTokenByte(c) {
				return false
			}
		}
		value := trimOWS(hl[colon+1:])
		for _, c := range value {
			if (c < ' ' && c != '\t') || c == 0x7f || c >= 0x80 {
				return false
			}
		}
		switch {
		case asciiEqualFold(name, "Host"):
			hosts++
			fr.host = string(value)
			continue // written first, by frontExchange
		case asciiEqualFold(name, "Connection"):
			ok := true
			forEachToken(value, func(t []byte) {
				switch {
				case asciiEqualFold(t, "close"):
					fr.close = true
				case asciiEqualFold(t, "keep-alive"):
				default:
					ok = false
				}
			})
			if !ok {
				return false
			}
			continue
		case asciiEqualFold(name, "Keep-Alive"), asciiEqualFold(name, "Proxy-Connection"):
			continue // hop-by-hop: not forwarded
		case asciiEqualFold(name, "Forwarded"), asciiEqualFold(name, "X-Forwarded-For"),
			asciiEqualFold(name, "X-Forwarded-Host"), asciiEqualFold(name, "X-Forwarded-Proto"):
			continue // replaced by the proxy's own
		case asciiEqualFold(name, "Content-Length"), asciiEqualFold(name, "Transfer-Encoding"),
			asciiEqualFold(name, "Upgrade"), asciiEqualFold(name, "Expect"), asciiEqualFold(name, "Te"),
			asciiEqualFold(name, "Trailer"), asciiEqualFold(name, "Proxy-Authorization"),
			asciiEqualFold(name, "Proxy-Authenticate"), asciiEqualFold(name, "Http2-Settings"):
			return false
		}
		if fr.n == len(fr.lines) {
			return false
		}
		fr.lines[fr.n] = hl
		fr.n++
	}
	return hosts == 1 && fr.host != "" && string(rest) == "\r\n"
}

// frontExchange relays fr to e's backend and the answer back to c. done is
// false when nothing was consumed from br nor written to c (net/http then
// takes the connection, request and all); keep says c may serve another
// request.
func (p *Proxy) frontExchange(c net.Conn, br *bufio.Reader, head []byte, fr *frontRequest, e *entry) (done, keep bool) {
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
			bc, reused = &backendConn{c: bcNew}, false
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
		keep, ok := p.frontRelay(c, bc, fr, rh)
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

// respHead is what the front needs of a response head.
type respHead struct {
	raw    []byte // the head as the backend sent it
	status int
	length int64 // -1: none given
	chunk  bool  // Transfer-Encoding: chunked
	close  bool  // the backend closes after this response
}

// frontSend writes fr on bc and reads the backend's response head (after
// any 1xx, which is passed to c). It fails only before anything was written
// to c.
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
	if ip, _, err := net.SplitHostPort(c.RemoteAddr().String()); err == nil {
		bw.WriteString("X-Forwarded-For: ")
		bw.WriteString(ip)
		bw.WriteString("\r\n")
	}
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

// readRespHead reads and parses a response head from br.
func readRespHead(br *bufio.Reader) (*respHead, error) {
	head, err := peekHead(br, respHeadMax)
	if err != nil {
		return nil, err
	}
	if head == nil {
		return nil, errors.New("response head too large or cut short")
	}
	rh := &respHead{raw: head, length: -1}
	// No control bytes inside a line: a bare CR or LF would split the head
	// differently for the client than here.
	for _, c := range head[:len(head)-2] {
		if (c < ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f {
			return nil, errors.New("control byte in response head")
		}
	}
	if bytes.Count(head, []byte("\n")) != bytes.Count(head, []byte("\r\n")) || bytes.Count(head, []byte("\r")) != bytes.Count(head, []byte("\r\n")) {
		return nil, errors.New("bare CR or LF in response head")
	}
	i := bytes.Index(head, []byte("\r\n"))
	line := head[:i]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return nil, errors.New("malformed status line")
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 100 || code > 999 || (len(line) > 12 && line[12] != ' ') {
		return nil, errors.New("malformed status code")
	}
	rh.status = code
	if line[7] == '0' {
		rh.close = true // HTTP/1.0: no keep-alive unless asked, and we do not ask
	}
	rest := head[i+2:]
	for len(rest) > 2 {
		j := bytes.Index(rest, []byte("\r\n"))
		if j <= 0 {
			return nil, errors.New("malformed header")
		}
		hl := rest[:j]
		rest = rest[j+2:]
		colon := bytes.IndexByte(hl, ':')
		if colon <= 0 || hl[0] == ' ' || hl[0] == '\t' {
			return nil, errors.New("malformed header")
		}
		name, value := hl[:colon], trimOWS(hl[colon+1:])
		for _, c := range name {
			if !isTokenByte(c) {
				return nil, errors.New("malformed header name")
			}
		}
		switch {
		case asciiEqualFold(name, "Content-Length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (rh.length >= 0 && n != rh.length) {
				return nil, errors.New("bad Content-Length")
			}
			rh.length = n
		case asciiEqualFold(name, "Transfer-Encoding"):
			if !asciiEqualFold(value, "chunked") || rh.chunk {
				return nil, errors.New("unsupported Transfer-Encoding")
			}
			rh.chunk = true
		case asciiEqualFold(name, "Connection"):
			forEachToken(value, func(t []byte) {
				if asciiEqualFold(t, "close") {
					rh.close = true
				}
			})
		}
	}
	if rh.chunk && rh.length >= 0 {
		return nil, errors.New("both Content-Length and chunked")
	}
	if _, err := br.Discard(len(head)); err != nil {
		return nil, err
	}
	return rh, nil
}

// frontRelay writes the response head (hop-by-hop headers out) and body to
// c. keep says c may serve another request; ok says bc may be reused.
func (p *Proxy) frontRelay(c net.Conn, bc *backendConn, fr *frontRequest, rh *respHead) (keep, ok bool) {
	noBody := fr.head || rh.status == http.StatusNoContent || rh.status == http.StatusNotModified
	untilEOF := !noBody && !rh.chunk && rh.length < 0
	keep = !fr.close && !untilEOF
	buf := p.buffers.Get()
	defer p.buffers.Put(buf)
	out := appendRespHead(buf[:0], rh.raw, !keep)
	// A small body already in the buffer goes out with the head, in one
	// write.
	if !noBody && !rh.chunk && rh.length >= 0 && rh.length <= int64(bc.br.Buffered()) && len(out)+int(rh.length) <= cap(out) {
		body, _ := bc.br.Peek(int(rh.length))
		out = append(out, body...)
		_, _ = bc.br.Discard(int(rh.length))
		if _, err := c.Write(out); err != nil {
			return false, !rh.close
		}
		return keep, !rh.close
	}
	if _, err := c.Write(out); err != nil {
		return false, false
	}
	var err error
	switch {
	case noBody:
	case rh.chunk:
		err = relayChunked(c, bc.br, buf)
	case rh.length >= 0:
		var n int64
		n, err = io.CopyBuffer(c, io.LimitReader(bc.br, rh.length), buf)
		if err == nil && n < rh.length {
			err = io.ErrUnexpectedEOF // the backend closed inside the body
		}
	default:
		// Until the backend closes; then the client's connection ends too.
		_, _ = io.CopyBuffer(c, bc.br, buf)
		return false, false
	}
	if err != nil {
		return false, false
	}
	return keep, !rh.close
}

// appendRespHead appends raw without its hop-by-hop headers (keeping
// Transfer-Encoding: chunked, whose body is relayed as it is), adding
// Connection: close when closing.
func appendRespHead(out, raw []byte, closing bool) []byte {
	// The client asked in HTTP/1.1, and is answered in it whatever the
	// backend spoke: "HTTP/1.x" is replaced, the code and reason kept.
	i := bytes.Index(raw, []byte("\r\n"))
	out = append(out, "HTTP/1.1"...)
	out = append(out, raw[8:i+2]...)
	rest := raw[i+2:]
	// Names listed in Connection are hop-by-hop too.
	var named [][]byte
	for r := rest; len(r) > 2; {
		j := bytes.Index(r, []byte("\r\n"))
		hl := r[:j]
		r = r[j+2:]
		colon := bytes.IndexByte(hl, ':')
		if asciiEqualFold(hl[:colon], "Connection") {
			forEachToken(trimOWS(hl[colon+1:]), func(t []byte) { named = append(named, t) })
		}
	}
	for len(rest) > 2 {
		j := bytes.Index(rest, []byte("\r\n"))
		hl := rest[:j+2]
		rest = rest[j+2:]
		colon := bytes.IndexByte(hl, ':')
		name := hl[:colon]
		if isRespHop(name, named) {
			continue
		}
		out = append(out, hl...)
	}
	if closing {
		out = append(out, "Connection: close\r\n"...)
	}
	return append(out, "\r\n"...)
}

func isRespHop(name []byte, named [][]byte) bool {
	// Trailer stays: the chunked body is relayed with its trailers as
	// they are, and Trailer announces them.
	for _, h := range [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Upgrade"} {
		if asciiEqualFold(name, h) {
			return true
		}
	}
	for _, n := range named {
		if asciiEqualFold(name, string(n)) && !asciiEqualFold(name, "Transfer-Encoding") {
			return true
		}
	}
	return false
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

// chunkSize parses "1a;ext\r\n".
func chunkSize(line []byte) (int64, bool) {
	line = bytes.TrimSuffix(line, []byte("\r\n"))
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(line), 16, 64)
	return n, err == nil && n >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// forEachToken calls f for each comma-separated, trimmed, non-empty token.
func forEachToken(v []byte, f func([]byte)) {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		var t []byte
		if i < 0 {
			t, v = v, nil
		} else {
			t, v = v[:i], v[i+1:]
		}
		if t = trimOWS(t); len(t) > 0 {
			f(t)
		}
	}
}
