package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// queueLen is how many messages wait for a client that does not read
// before progress notifications are dropped.
const queueLen = 64

// errNotServing is why a write fails once Serve has returned or its
// context ended.
var errNotServing = errors.New("the MCP session is over")

// lineWriter is the protocol stream. One goroutine writes it, whole lines
// in the order they were handed over, so a client that stops reading its
// stdout (a suspended agent, a pipe nobody reads) stalls that goroutine
// and nothing else:
//
//   - Write, for what mcp-go sends (answers, errors), queues the line and
//     waits only while the queue is full: an answer is never dropped.
//   - notify, for a tool's progress, queues the line only when the queue
//     has room, else drops it. A tool call never waits on the client, so
//     it keeps reading the daemon and its op (and the world the op locks)
//     goes on (issue 38: "no client can freeze a world").
//
// A call's progress is queued before its answer, so the client still reads
// every notification it gets before the call's result.
type lineWriter struct {
	queue chan outLine
	quit  chan struct{} // closed when Serve returns
	stop  <-chan struct{}
	log   hclog.Logger

	mu       sync.Mutex
	err      error // the first write that failed: the client is gone
	dropped  int   // progress notifications dropped in a row
	dropping bool
}

// outLine is one line to write, or (flushed set) a mark to close once
// every line queued before it is written.
type outLine struct {
	b       []byte
	flushed chan struct{}
}

// newLineWriter starts writing w until close; stop (the session's
// context) ends every wait for room in the queue.
func newLineWriter(w io.Writer, stop <-chan struct{}, log hclog.Logger) *lineWriter {
	l := &lineWriter{queue: make(chan outLine, queueLen), quit: make(chan struct{}), stop: stop, log: log}
	go l.run(w)
	return l
}

func (l *lineWriter) run(w io.Writer) {
	for {
		select {
		case m := <-l.queue:
			if m.flushed != nil {
				close(m.flushed)
				continue
			}
			if l.failed() != nil {
				continue // the client is gone: nothing reads this
			}
			if _, err := w.Write(m.b); err != nil {
				l.mu.Lock()
				l.err = err
				l.mu.Unlock()
			}
		case <-l.quit:
			return
		}
	}
}

func (l *lineWriter) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Write queues one message mcp-go sends, waiting while the queue is full.
// A JSON-RPC error is bounded first (boundProtocolError).
func (l *lineWriter) Write(p []byte) (int, error) {
	if err := l.failed(); err != nil {
		return 0, err
	}
	m := outLine{b: bytes.Clone(boundProtocolError(p))}
	select {
	case l.queue <- m:
		return len(p), nil
	case <-l.quit:
		return 0, errNotServing
	case <-l.stop:
		return 0, errNotServing
	}
}

// tryWrite queues line unless the queue is full, and says whether it did.
func (l *lineWriter) tryWrite(line []byte) bool {
	if l.failed() != nil {
		return false
	}
	select {
	case l.queue <- outLine{b: line}:
	default:
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.dropping {
			l.log.Warn("the client is not reading: progress notifications are dropped until it reads again; answers wait for it")
		}
		l.dropping = true
		l.dropped++
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropping {
		l.log.Info("the client reads again", "progress_dropped", l.dropped)
	}
	l.dropping, l.dropped = false, 0
	return true
}

// flush waits until every line queued so far is written (or dropped for
// a client that is gone), or ctx ends.
func (l *lineWriter) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case l.queue <- outLine{flushed: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close ends the writing goroutine (after the write it is in, if any).
func (l *lineWriter) close() { close(l.quit) }
