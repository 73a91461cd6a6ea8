package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/host/api"
)

// RunningError means another daemon already serves this BINKY_HOME.
type RunningError struct{ Pid int }

func (e *RunningError) Error() string {
	return fmt.Sprintf("a daemon is already running for this BINKY_HOME (pid %d)", e.Pid)
}

// stream is what a handler writes to while it works.
type stream struct {
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

func (s *stream) send(f api.Frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	if err := s.enc.Encode(f); err != nil {
		s.dead = true
	}
}

// progress reports a step; safe from many goroutines.
func (s *stream) progress(step, service, msg string) {
	if s.redact != nil {
		msg = s.redact(msg)
	}
	s.send(api.Frame{Progress: &api.Progress{Step: step, Service: service, Message: msg, Elapsed: time.Since(s.start).Milliseconds()}})
}

func (s *stream) output(check int, streamName, data string) {
	if s.redact != nil {
		data = s.redact(data)
	}
	s.send(api.Frame{Output: &api.Output{Check: check, Stream: streamName, Data: data}})
}

// handler serves one op.
type handler func(ctx context.Context, args json.RawMessage, s *stream) (any, error)

// serve accepts connections until ctx ends.
func (d *Daemon) serve(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			d.log.Warn("accept", "error", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.handleConn(ctx, c)
		}()
	}
}

func (d *Daemon) handleConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	enc := json.NewEncoder(c)
	if err := checkPeer(c); err != nil {
		d.log.Warn("refused a caller", "error", err)
		enc.Encode(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: "refused: " + err.Error()}})
		return
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), api.MaxLine)
	if !sc.Scan() {
		return
	}
	var req api.Request
	if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
		enc.Encode(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: "request is not JSON: " + err.Error()}})
		return
	}
	// Adapters are discovered on the caller's PATH (forwarded in "env"),
	// not the daemon's: what the caller installed is what it finds.
	var caller struct {
		Env map[string]string `json:"env"`
	}
	_ = json.Unmarshal(req.Args, &caller)
	ctx = adapter.WithCallerPath(ctx, caller.Env["PATH"])
	h, ok := d.handlers[req.Op]
	if !ok {
		enc.Encode(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: fmt.Sprintf("unknown op %q", req.Op)}})
		return
	}
	if d.idle != nil {
		d.idle.Begin()
		defer d.idle.End()
	}
	// The call's context ends when the daemon stops; a caller that hangs
	// up does not abort work that would leave a world half-made.
	gone := make(chan struct{})
	go func() {
		// The caller sends nothing after its request: a read that returns
		// means it hung up (or the call ended and c was closed).
		var b [1]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				close(gone)
				return
			}
		}
	}()
	s := &stream{enc: enc, start: time.Now(), gone: gone, redact: d.redact.String}
	// A bug in one op must not take the daemon, and every other caller's
	// op, down with it: the caller gets an internal error, the log the
	// stack. The op's deferred unlocks have run by then.
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("op panicked", "op", req.Op, "panic", d.redact.String(fmt.Sprint(r)), "stack", string(debug.Stack()))
			s.send(api.Frame{Error: &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("internal error in %s (a bug; daemon.log has the stack): %s", req.Op, d.redact.String(fmt.Sprint(r)))}})
		}
	}()
	res, err := h(ctx, req.Args, s)
	if err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			ae = &api.Error{Code: api.CodeInternal, Message: err.Error()}
		}
		ae = &api.Error{Code: ae.Code, Message: d.redact.String(ae.Message), Detail: ae.Detail}
		s.send(api.Frame{Error: ae})
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.send(api.Frame{Error: &api.Error{Code: api.CodeInternal, Message: "encode result: " + err.Error()}})
		return
	}
	s.send(api.Frame{Result: b})
}

// errorf builds an api error with a code.
func errorf(code, format string, args ...any) *api.Error {
	return &api.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decode reads args into v, as an invalid-request error on failure.
func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return errorf(api.CodeInvalid, "bad arguments: %v", err)
	}
	return nil
}
