package world

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// FrameWait bounds the write of one frame to the caller. A caller that
// takes nothing for that long — it stopped reading: a Ctrl-Z'd binky, a
// paused pager, a stalled MCP client — loses its stream, so it can hold
// neither the op (and the world's lock) nor the daemon's stop.
const FrameWait = 5 * time.Second

// ErrCallerGone is why UntilGone's context ends when the caller hung up or
// stopped reading.
var ErrCallerGone = errors.New("the caller hung up or stopped reading")

// Stream is what an op writes to while it works: progress, output and, at
// the end, the result frame the daemon sends. Safe from many goroutines.
//
// Every write is bounded (FrameWait) where the writer takes a deadline (a
// net.Conn). Once one runs out of time the stream is dead: progress and
// output are dropped, Gone closes (the op treats it as a hung-up caller),
// and only the final frame (result or error) is still attempted, once,
// after the rest of the frame the stall cut, so a caller that reads again
// gets whole lines and its answer.
type Stream struct {
	mu      sync.Mutex // one frame at a time
	w       io.Writer
	start   time.Time
	dead    bool   // no more progress or output
	stalled bool   // dead because a write ran out of time: the caller stopped reading
	retry   bool   // after a stall, the final frame is still to be tried
	cut     []byte // the unwritten rest of the frame the stall cut

	dl   sync.Mutex // the write deadline and wait, apart from mu: SetWait reaches a write in flight
	conn interface{ SetWriteDeadline(time.Time) error }
	wait time.Duration

	// gone is closed when the caller hangs up (HangUp) or stops reading.
	// Most ops finish anyway (a world is not left half-made); a queued up
	// leaves the queue; a run's command ends only on HungUp.
	goneOnce sync.Once
	gone     chan struct{}
	// hungUp is closed only when the caller hung up (HangUp, or a write
	// that failed for another reason than its deadline): a command whose
	// caller merely stopped reading goes on (UntilHungUp).
	hungOnce sync.Once
	hungUp   chan struct{}
	// redact hides secrets in what progress and output frames carry (a
	// verify command's output, a message quoting an adapter).
	redact func(string) string
	// in is what the caller sends after its request (ReadCaller).
	in inputs
}

// NewStream writes frames to w, each within FrameWait when w takes a write
// deadline (a net.Conn); redact (nil: none) masks progress and output text.
func NewStream(w io.Writer, redact func(string) string) *Stream {
	s := &Stream{w: w, start: time.Now(), wait: FrameWait, gone: make(chan struct{}), hungUp: make(chan struct{}), redact: redact}
	if c, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		s.conn = c
	}
	return s
}

// HangUp says the caller hung up: Gone and HungUp close.
func (s *Stream) HangUp() {
	s.hungOnce.Do(func() { close(s.hungUp) })
	s.stop()
}

// stop closes Gone: the caller hung up or stopped reading.
func (s *Stream) stop() { s.goneOnce.Do(func() { close(s.gone) }) }

// HungUp is closed when the caller hung up; not when it only stopped
// reading.
func (s *Stream) HungUp() <-chan struct{} { return s.hungUp }

// Gone is closed when the caller hangs up or stops reading.
func (s *Stream) Gone() <-chan struct{} { return s.gone }

// Stalled reports whether the caller stopped reading and lost its stream.
func (s *Stream) Stalled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled
}

// SetWait bounds every write from now on, the one in flight included, by
// wait instead of FrameWait: a stopping daemon gives a caller that stopped
// reading a moment.
func (s *Stream) SetWait(wait time.Duration) {
	s.dl.Lock()
	defer s.dl.Unlock()
	s.wait = wait
	if s.conn != nil {
		s.conn.SetWriteDeadline(time.Now().Add(wait))
	}
}

// UntilGone is ctx ended also when s's caller hangs up or stops reading
// (its cause ErrCallerGone).
func UntilGone(ctx context.Context, s Progress) (context.Context, context.CancelFunc) {
	return until(ctx, s.Gone(), ErrCallerGone)
}

// ErrCallerHungUp is why UntilHungUp's context ends.
var ErrCallerHungUp = errors.New("the caller hung up")

// UntilHungUp is ctx ended also when s's caller hangs up (its cause
// ErrCallerHungUp), but not when it only stops reading: a binky run whose
// output waits behind a paused pager runs to its end, its output dropped.
func UntilHungUp(ctx context.Context, s Progress) (context.Context, context.CancelFunc) {
	return until(ctx, s.HungUp(), ErrCallerHungUp)
}

func until(ctx context.Context, done <-chan struct{}, cause error) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-done:
			cancel(cause)
		case <-cctx.Done():
		}
	}()
	return cctx, func() { cancel(nil) }
}

// Send writes one frame. Progress and output are dropped once the stream
// is dead; a result or error frame is still attempted once after a stall.
func (s *Stream) Send(f api.Frame) { s.send(f) }

// Progress reports a step.
func (s *Stream) Progress(step, service, msg string) { s.progress(step, service, msg) }

// Output reports a chunk of a command's output.
func (s *Stream) Output(check int, streamName, data string) { s.output(check, streamName, data) }

func (s *Stream) send(f api.Frame) {
	final := f.Result != nil || f.Error != nil
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.dead:
	case final && s.retry:
		b = append(s.cut, b...)
		s.cut, s.retry = nil, false
	default:
		return
	}
	s.deadline()
	n, err := s.w.Write(b)
	if err == nil {
		return
	}
	s.dead = true
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.stalled = true
		if !final {
			s.retry, s.cut = true, append([]byte(nil), b[n:]...)
		}
		s.stop()
		return
	}
	s.HangUp()
}

// deadline bounds the next write by the stream's wait.
func (s *Stream) deadline() {
	s.dl.Lock()
	defer s.dl.Unlock()
	if s.conn != nil {
		s.conn.SetWriteDeadline(time.Now().Add(s.wait))
	}
}

func (s *Stream) progress(step, service, msg string) {
	if s.redact != nil {
		msg = s.redact(msg)
	}
	s.send(api.Frame{Progress: &api.Progress{Step: step, Service: service, Message: msg, Elapsed: time.Since(s.start).Milliseconds()}})
}

func (s *Stream) output(check int, streamName, data string) {
	if s.redact != nil {
		data = s.redact(data)
	}
	s.send(api.Frame{Output: &api.Output{Check: check, Stream: streamName, Data: data}})
}
