package world

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/binkyhq/binky/host/api"
)

// Input is what an op that asked for its caller's stdin reads (binky run
// -i/-t): the Progress it was given implements it when the caller can send
// input (a Stream does).
type Input interface {
	// Attach tells the caller the command started and takes input, and
	// returns the caller's Input lines from then on. The channel closes
	// when the caller hangs up; stop (call it once the command ended)
	// drops whatever the caller sends after.
	Attach(a api.Attach) (in <-chan api.Input, stop func())
}

// inputs is the caller's side of a Stream: what ReadCaller decodes goes to
// the op that attached, or nowhere.
type inputs struct {
	mu    sync.Mutex
	ch    chan api.Input // nil until Attach
	stop  chan struct{}  // closed by Attach's stop
	ended bool           // ReadCaller returned: the caller hung up
}

// ReadCaller reads what the caller sends after its request until it hangs
// up (then HungUp and Gone close). Most callers send nothing; a run that
// attached gets the Input lines (Attach), and before that, or after its
// command ended, they are dropped. A line that is not an Input is dropped.
func (s *Stream) ReadCaller(r io.Reader) {
	defer s.HangUp()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), api.MaxLine)
	defer s.in.end()
	for sc.Scan() {
		in, ok := parseInput(sc.Bytes())
		if !ok {
			continue
		}
		s.in.deliver(in)
	}
}

// parseInput decodes one line a caller sent; ok is false for a line that
// is not an Input.
func parseInput(line []byte) (api.Input, bool) {
	var in api.Input
	if err := json.Unmarshal(line, &in); err != nil {
		return api.Input{}, false
	}
	if in.Size != nil && (in.Size.Rows == 0 || in.Size.Cols == 0) {
		in.Size = nil
	}
	return in, len(in.Data) > 0 || in.EOF || in.Size != nil
}

// deliver hands in to the attached op, waiting while it is busy (a slow
// command's stdin holds the caller back through the socket), or drops it.
func (p *inputs) deliver(in api.Input) {
	p.mu.Lock()
	ch, stop := p.ch, p.stop
	p.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- in:
	case <-stop:
	}
}

// end closes the attached channel: the caller hung up.
func (p *inputs) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.ch != nil {
		close(p.ch)
	}
}

// Attach sends the Attach frame and returns the caller's input from now on.
func (s *Stream) Attach(a api.Attach) (<-chan api.Input, func()) {
	p := &s.in
	p.mu.Lock()
	ch := make(chan api.Input, 16)
	stop := make(chan struct{})
	if p.ended {
		close(ch)
	} else {
		p.ch, p.stop = ch, stop
	}
	p.mu.Unlock()
	s.Send(api.Frame{Attach: &a})
	var once sync.Once
	return ch, func() { once.Do(func() { close(stop) }) }
}

var _ Input = (*Stream)(nil)

// wholeRunes passes writes on cut at rune boundaries: an output frame
// carries a JSON string, where half a UTF-8 sequence would become U+FFFD.
// A terminal's reads split multi-byte characters anywhere.
type wholeRunes struct {
	w    io.Writer
	rest []byte
}

func (r *wholeRunes) Write(p []byte) (int, error) {
	b := append(r.rest, p...)
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	r.rest = append([]byte(nil), b[cut:]...)
	if cut > 0 {
		if _, err := r.w.Write(b[:cut]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held, whole or not.
func (r *wholeRunes) Flush() {
	if len(r.rest) > 0 {
		r.w.Write(r.rest)
		r.rest = nil
	}
}
