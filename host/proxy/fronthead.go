package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
)

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

// headBuffered reports whether a whole request head is in br's buffer
// already, as it is when it came in one segment.
func headBuffered(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Buffered())
	return bytes.Contains(buf, []byte("\r\n\r\n"))
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
			continue // hop-by-hop, and harmless: not forwarded
		case anyEqualFold(name, forwardedHeaders[:]):
			continue // replaced by the proxy's own
		case anyEqualFold(name, hopHeaders), asciiEqualFold(name, "Content-Length"),
			asciiEqualFold(name, "Expect"), asciiEqualFold(name, "Http2-Settings"):
			return false // the other hop-by-hop headers, and bodies: net/http's
		}
		if fr.n == len(fr.lines) {
			return false
		}
		fr.lines[fr.n] = hl
		fr.n++
	}
	return hosts == 1 && fr.host != "" && string(rest) == "\r\n"
}

// respHead is what the front needs of a response head.
type respHead struct {
	raw    []byte // the head as the backend sent it
	status int
	length int64    // -1: none given
	chunk  bool     // Transfer-Encoding: chunked
	close  bool     // the backend closes after this response
	named  [][]byte // header names its Connection header lists (hop-by-hop too)
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
				rh.named = append(rh.named, t)
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

// appendRespHead appends raw without its hop-by-hop headers (keeping
// Transfer-Encoding: chunked, whose body is relayed as it is), adding
// Connection: close when closing.
func appendRespHead(out []byte, rh *respHead, closing bool) []byte {
	// The client asked in HTTP/1.1, and is answered in it whatever the
	// backend spoke: "HTTP/1.x" is replaced, the code and reason kept.
	raw := rh.raw
	i := bytes.Index(raw, []byte("\r\n"))
	out = append(out, "HTTP/1.1"...)
	out = append(out, raw[8:i+2]...)
	for rest := raw[i+2:]; len(rest) > 2; {
		j := bytes.Index(rest, []byte("\r\n"))
		hl := rest[:j+2]
		rest = rest[j+2:]
		if !isRespHop(hl[:bytes.IndexByte(hl, ':')], rh.named) {
			out = append(out, hl...)
		}
	}
	if closing {
		out = append(out, "Connection: close\r\n"...)
	}
	return append(out, "\r\n"...)
}

func isRespHop(name []byte, named [][]byte) bool {
	// Transfer-Encoding and Trailer stay: the chunked body is relayed with
	// its trailers as they are, and they announce it.
	for _, h := range hopHeaders {
		if h != "Trailer" && h != "Transfer-Encoding" && asciiEqualFold(name, h) {
			return true
		}
	}
	for _, n := range named {
		if asciiEqualFold(name, n) && !asciiEqualFold(name, "Transfer-Encoding") {
			return true
		}
	}
	return false
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

func asciiEqualFold[T ~string | ~[]byte](b []byte, s T) bool {
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

// anyEqualFold reports whether b is one of names, ignoring ASCII case.
func anyEqualFold(b []byte, names []string) bool {
	for _, n := range names {
		if asciiEqualFold(b, n) {
			return true
		}
	}
	return false
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
