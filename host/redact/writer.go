package redact

import (
	"io"
	"strings"
	"sync"
)

// maxHold bounds what a Writer holds back while a run of secrets continues
// across writes; past it the settled part of the run is flushed as one Mask
// and the rest of the run is remembered as covered.
const maxHold = 64 << 10

// Writer returns a writer that redacts everything written to it before
// passing it to w. A secret split across two Write calls, or across lines, is
// still masked: the writer holds back the last len(longest secret)-1 bytes
// until more data or Close shows they are not the start of a secret. Close
// flushes what is held back; it does not close w. The returned writer is safe
// for concurrent use.
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	return &writer{r: r, w: w}
}

type writer struct {
	r      *Redactor
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
	closed bool
	// carry is how many leading bytes of buf are known to be covered by an
	// occurrence that began in bytes already written (only after a forced
	// flush inside a long run); inRun says the bytes written so far end
	// with a Mask that those bytes continue.
	carry int
	inRun bool
}

func (wr *writer) Write(p []byte) (int, error) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.closed {
		return 0, io.ErrClosedPipe
	}
	wr.buf = append(wr.buf, p...)
	if err := wr.flush(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes out whatever is held back.
func (wr *writer) Close() error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.closed {
		return nil
	}
	wr.closed = true
	return wr.flush(true)
}

// flush writes the part of buf whose redaction can no longer change.
//
// A byte at index i can only be covered by an occurrence that starts at most
// longest-1 bytes before it and ends at most longest-1 bytes after it, so
// every byte before len(buf)-(longest-1) is settled. The cut is moved back to
// the start of a covered run that reaches it, so a run is always emitted
// whole, as one Mask, and the bytes emitted never end inside a run: no
// occurrence starting in emitted bytes can reach the held-back tail.
func (wr *writer) flush(final bool) error {
	secrets := wr.r.snapshot()
	if len(secrets) == 0 {
		if len(wr.buf) == 0 {
			return nil
		}
		_, err := wr.w.Write(wr.buf)
		wr.buf = wr.buf[:0]
		return err
	}
	longest := len(secrets[0])
	covered := cover(wr.buf, secrets)
	if wr.carry > 0 {
		if covered == nil {
			covered = make([]bool, len(wr.buf))
		}
		for i := 0; i < wr.carry && i < len(covered); i++ {
			covered[i] = true
		}
	}
	cut := len(wr.buf)
	forced := false
	if !final {
		cut = len(wr.buf) - (longest - 1)
		if cut <= 0 {
			return nil
		}
		if covered != nil && covered[cut-1] {
			c := cut
			for c > 0 && covered[c-1] {
				c--
			}
			if c > 0 || len(wr.buf) < maxHold {
				cut = c
			} else {
				forced = true
			}
		}
		if cut == 0 {
			return nil
		}
	}
	var b strings.Builder
	switch {
	case covered == nil:
		b.Write(wr.buf[:cut])
	case wr.inRun && covered[0]:
		// The Mask for this run was written already.
		i := 0
		for i < cut && covered[i] {
			i++
		}
		emit(&b, wr.buf[i:cut], covered[i:cut])
	default:
		emit(&b, wr.buf[:cut], covered[:cut])
	}
	wr.carry, wr.inRun = 0, false
	if forced {
		// The run goes on past the cut: remember how far it is known to
		// reach, so its tail is masked even if no whole secret remains.
		j := cut
		for j < len(covered) && covered[j] {
			j++
		}
		wr.carry, wr.inRun = j-cut, true
	}
	n := copy(wr.buf, wr.buf[cut:])
	wr.buf = wr.buf[:n]
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(wr.w, b.String())
	return err
}
