package world

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// Stream is what an op writes to while it works: progress, output and, at
// the end, the result frame the daemon sends. Safe from many goroutines.
type Stream struct {
	mu    sync.Mutex
	enc   *json.Encoder
	start time.Time
	dead  bool
	// gone is closed when the caller hangs up. Most ops finish anyway (a
	// world is not left half-made); a queued up leaves the queue.
	gone <-chan struct{}
	// redact hides secrets in what progress and output frames carry (a
	// verify command's output, a message quoting an adapter).
	redact func(string) string
}

// stream is the name the pipeline's bodies use.
type stream = Stream

// NewStream writes frames to enc; gone is closed when the caller hangs up,
// and redact (nil: none) masks progress and output text.
func NewStream(enc *json.Encoder, gone <-chan struct{}, redact func(string) string) *Stream {
	return &Stream{enc: enc, start: time.Now(), gone: gone, redact: redact}
}

// Gone is closed when the caller hangs up.
func (s *Stream) Gone() <-chan struct{} { return s.gone }

// Send writes one frame; after a write error the stream goes quiet.
func (s *Stream) Send(f api.Frame) { s.send(f) }

// Progress reports a step.
func (s *Stream) Progress(step, service, msg string) { s.progress(step, service, msg) }

// Output reports a chunk of a command's output.
func (s *Stream) Output(check int, streamName, data string) { s.output(check, streamName, data) }

func (s *Stream) send(f api.Frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	if err := s.enc.Encode(f); err != nil {
		s.dead = true
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
