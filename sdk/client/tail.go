package client

import (
	"strconv"
	"sync"
)

// StderrLimit bounds the stderr kept from one call (or one RPC batch between
// two hand-offs): the last 64 KiB.
const StderrLimit = 64 << 10

// tail keeps the last limit bytes written to it. It is safe for concurrent
// use: go-plugin writes to it from its own goroutines.
type tail struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func newTail(limit int) *tail { return &tail{limit: limit} }

// Write implements io.Writer; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.limit {
		t.dropped += int64(len(t.buf) + len(p) - t.limit)
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// take returns what was kept (prefixed with a note when bytes were dropped)
// and empties the buffer.
func (t *tail) take() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return nil
	}
	var out []byte
	if t.dropped > 0 {
		out = append(out, []byte("[earlier stderr dropped: "+strconv.FormatInt(t.dropped, 10)+" bytes]\n")...)
	}
	out = append(out, t.buf...)
	t.buf, t.dropped = nil, 0
	return out
}
