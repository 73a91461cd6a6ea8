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
	"github.com/binkyhq/binky/host/world"
)

// RunningError means another daemon already serves this BINKY_HOME.
type RunningError struct{ Pid int }

func (e *RunningError) Error() string {
	return fmt.Sprintf("a daemon is already running for this BINKY_HOME (pid %d)", e.Pid)
}

// stream is what a handler writes to while it works (host/world).
type stream = world.Stream

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

// stopFrameWait bounds each write to a caller once the daemon is stopping:
// a caller that reads takes a frame in far less, one that stopped reading
// holds the stop no longer.
const stopFrameWait = time.Second

func (d *Daemon) handleConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	// Every frame, these first answers included, is written within
	// world.FrameWait: a caller that stops reading loses its stream and
	// holds up neither its op, nor the world's lock, nor the daemon's stop.
	s := world.NewStream(c, d.redact.String)
	// A stopping daemon waits for no caller: not for one that never sends
	// its request, nor for one that stopped reading.
	defer context.AfterFunc(ctx, func() {
		c.SetReadDeadline(time.Now())
		s.SetWait(stopFrameWait)
	})()
	req, ok := d.readRequest(c, s)
	if !ok {
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
		s.Send(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: fmt.Sprintf("unknown op %q", req.Op)}})
		return
	}
	if d.idle != nil {
		d.idle.Begin()
		defer d.idle.End()
	}
	// The call's context ends when the daemon stops; a caller that hangs
	// up does not abort work that would leave a world half-made.
	go watchHangUp(c, s)
	d.callOp(ctx, h, req, s)
}

// readRequest checks the caller is this user and reads its one request
// line. It reports false when there is nothing to serve: the caller was
// refused or sent no JSON (it has been told why), or it sent nothing.
func (d *Daemon) readRequest(c net.Conn, s *stream) (*api.Request, bool) {
	if err := checkPeer(c); err != nil {
		d.log.Warn("refused a caller", "error", err)
		s.Send(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: "refused: " + err.Error()}})
		return nil, false
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), api.MaxLine)
	if !sc.Scan() {
		return nil, false
	}
	var req api.Request
	if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
		s.Send(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: "request is not JSON: " + err.Error()}})
		return nil, false
	}
	return &req, true
}

// watchHangUp tells s when the caller on c hangs up: a read that returns
// an error means it hung up (or the call ended and c was closed). What the
// caller sends after its request goes to a run that attached its stdin
// (world.Stream.ReadCaller), or nowhere.
func watchHangUp(c net.Conn, s *stream) { s.ReadCaller(c) }

// callOp runs the op's handler h and sends its result, or its error,
// redacted, as the call's last frame.
func (d *Daemon) callOp(ctx context.Context, h handler, req *api.Request, s *stream) {
	defer func() {
		if s.Stalled() {
			d.log.Warn("a caller stopped reading: its progress and output were dropped, the op went on", "op", req.Op)
		}
	}()
	// A bug in one op must not take the daemon, and every other caller's
	// op, down with it: the caller gets an internal error, the log the
	// stack. The op's deferred unlocks have run by then.
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("op panicked", "op", req.Op, "panic", d.redact.String(fmt.Sprint(r)), "stack", string(debug.Stack()))
			s.Send(api.Frame{Error: &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("internal error in %s (a bug; daemon.log has the stack): %s", req.Op, d.redact.String(fmt.Sprint(r)))}})
		}
	}()
	res, err := h(ctx, req.Args, s)
	if err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			ae = &api.Error{Code: api.CodeInternal, Message: err.Error()}
		}
		ae = &api.Error{Code: ae.Code, Message: d.redact.String(ae.Message), Detail: ae.Detail}
		s.Send(api.Frame{Error: ae})
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.Send(api.Frame{Error: &api.Error{Code: api.CodeInternal, Message: "encode result: " + err.Error()}})
		return
	}
	s.Send(api.Frame{Result: b})
}
