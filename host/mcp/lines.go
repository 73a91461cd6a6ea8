package mcp

import "io"

// lineEnded is the protocol input with a newline added after its last line
// when that line has none. mcp-go's stdio server reads up to '\n' and, at
// EOF, drops an unterminated last line unanswered: a request written
// without its newline got no reply, and a line that is not JSON no -32700
// Parse error (issue 37).
type lineEnded struct {
	r    io.Reader
	seen bool // a byte was read
	last byte // the last byte read
	eof  bool // r is done
	owe  bool // the newline still to hand out
}

func (l *lineEnded) Read(p []byte) (int, error) {
	if l.eof {
		if l.owe && len(p) > 0 {
			l.owe = false
			p[0] = '\n'
			return 1, nil
		}
		return 0, io.EOF
	}
	n, err := l.r.Read(p)
	if n > 0 {
		l.seen, l.last = true, p[n-1]
	}
	if err != io.EOF {
		return n, err
	}
	l.eof = true
	l.owe = l.seen && l.last != '\n'
	if n > 0 {
		return n, nil // the newline, if owed, comes with the next Read
	}
	return l.Read(p)
}
