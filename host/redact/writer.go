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

// lazyHold is the held-back size past which a Writer stops rescanning on
// every write: it scans again once what it holds has grown by an eighth.
// Each scan looks at everything held, so a long secret arriving a byte or a
// line per write would otherwise cost the square of its length (FuzzForms
// found a 4 KB secret, one character per line, taking 15 s; and a secret of
// 370 '!' wrapped after every byte, with 4 KB here, took seconds once
// escapes were decoded); now it costs a constant number of scans per
// doubling. A held tail this long is rare: only an unfinished occurrence of
// a long secret (a PEM key while it is printed) is held that long, and
// Flush and Close still settle it at once.
const lazyHold = 512

// Writer returns a writer that redacts everything written to it before
// passing it to w, exactly as String would redact all of it at once. A
// secret split across two Write calls, or wrapped over lines, is still
// masked: the writer holds back the tail of what it was given from the
// first byte where an occurrence of a secret (or of a line of a multi-line
// secret) could begin but is not finished, until more data or Close
// settles it, so it never writes the start of a secret before it knows
// the rest. Text that cannot begin a secret passes at once. The stream's
// first bytes and its end at Close are a window's edges, as a string's
// are for String: a stream that begins or ends inside a line of a
// multi-line secret has the part it holds masked. Close flushes what is
// held back; it does not close w. The returned writer is safe for
// concurrent use.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Writer is a redacting stream; see Redactor.Writer.
type Writer struct {
	r      *Redactor
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
	closed bool
	// scanned is len(buf) after the last scan: what it still held.
	scanned int
	// carry is how many leading bytes of buf are known to be covered: by
	// an occurrence that began in bytes already written (after a forced
	// flush inside a long run), or by a mask made at the stream's start
	// that the next scan, no longer at the start, would not make again;
	// inRun says the bytes written so far end with a Mask that those bytes
	// continue.
	carry int
	inRun bool
	// started says bytes were taken out of buf since the stream's start
	// or the last Flush: buf no longer begins at a window's edge, where a
	// secret may be cut; masked says what was written ends with a Mask.
	started, masked bool
}

// Write redacts p and writes out what is settled.
func (wr *Writer) Write(p []byte) (int, error) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.closed {
		return 0, io.ErrClosedPipe
	}
	wr.buf = append(wr.buf, p...)
	if len(wr.buf) > lazyHold && len(wr.buf)-wr.scanned < len(wr.buf)/8 {
		return len(p), nil
	}
	if err := wr.flush(false, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes out whatever is held back.
func (wr *Writer) Close() error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.closed {
		return nil
	}
	wr.closed = true
	return wr.flush(true, false)
}

// Flush writes out what is held back, for a stream that has gone quiet
// (binky logs -f calls it when a log has had nothing new for a moment). A
// held tail of MinLen bytes or more that could begin a secret is masked,
// so a secret whose rest never comes is not shown; a shorter one is
// written as it is. A Flush ends a window: what is written next begins a
// new one, so the rest of a line of a multi-line secret that comes after
// it is masked (when it is MinLen bytes or more), but the rest of a
// single-line secret is not recognised.
func (wr *Writer) Flush() error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.closed {
		return nil
	}
	err := wr.flush(true, true)
	// A masked run at the new window's start continues the Mask written
	// last, if any.
	wr.started, wr.inRun = false, wr.masked
	return err
}

// Held reports how many bytes the writer holds back.
func (wr *Writer) Held() int {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return len(wr.buf)
}

// flush writes the part of buf whose redaction can no longer change.
//
// A byte before the first position where an unfinished occurrence begins
// can only be covered by occurrences that start before it and end inside
// buf, so it is settled. The cut is moved back to the start of a covered
// run that reaches it, so a run is always emitted whole, as one Mask, and
// the bytes emitted never end inside a run: no occurrence starting in
// emitted bytes can reach the held-back tail. final writes everything;
// maskTail also masks an unfinished occurrence of MinLen bytes or more.
func (wr *Writer) flush(final, maskTail bool) error {
	err := wr.settle(final, maskTail)
	wr.scanned = len(wr.buf)
	return err
}

// settle is flush without the bookkeeping of what was scanned.
func (wr *Writer) settle(final, maskTail bool) error {
	m := wr.r.matcher()
	if m == nil {
		if len(wr.buf) == 0 {
			return nil
		}
		_, err := wr.w.Write(wr.buf)
		wr.buf, wr.started, wr.masked = wr.buf[:0], true, false
		return err
	}
	sc := scan{start: !wr.started, end: final, partials: !final || maskTail}
	covered, partialAt, startEnd := m.cover(wr.buf, sc)
	if maskTail {
		// The line breaks ending the tail stay: they were held as a
		// possible gap inside a secret, not as part of one.
		end := len(wr.buf)
		for end > partialAt && (wr.buf[end-1] == '\n' || wr.buf[end-1] == '\r') {
			end--
		}
		if end-partialAt >= MinLen {
			if covered == nil {
				covered = make([]bool, len(wr.buf))
			}
			for i := partialAt; i < end; i++ {
				covered[i] = true
			}
		}
	}
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
		cut = partialAt
		if cut > 0 && covered != nil && covered[cut-1] {
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
		if sc.start && !forced && cut > 0 && cut < startEnd && !(covered[cut] && runEnd(covered, cut) >= startEnd) {
			// A mask made at the stream's start reaches past the cut but
			// would not be the leading run of what is held, which carry
			// keeps: the next scan, no longer at the start, would not
			// make it again. Hold everything until it is settled.
			cut = 0
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
	wr.carry, wr.inRun, wr.started = 0, false, true
	wr.masked = covered != nil && covered[cut-1]
	if covered != nil && cut < len(covered) && covered[cut] {
		// What is held begins with a covered run: remember how far it is
		// known to reach, so it is masked even if the next scan finds no
		// occurrence there (a forced flush cut the run, or the run is a
		// mask made at the stream's start). After a forced flush its
		// Mask was written already.
		wr.carry, wr.inRun = runEnd(covered, cut)-cut, forced
	}
	n := copy(wr.buf, wr.buf[cut:])
	wr.buf = wr.buf[:n]
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(wr.w, b.String())
	return err
}

// runEnd is the end of the run of covered bytes at i.
func runEnd(covered []bool, i int) int {
	for i < len(covered) && covered[i] {
		i++
	}
	return i
}
