package world

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// pipeStream is a stream onto one end of a net.Pipe (no buffer: a write
// waits for its reader) whose writes are bounded by wait, and the other
// end, which the test reads or not.
func pipeStream(t *testing.T, redact func(string) string, wait time.Duration) (*Stream, net.Conn) {
	t.Helper()
	daemon, caller := net.Pipe()
	t.Cleanup(func() { daemon.Close(); caller.Close() })
	s := NewStream(daemon, redact)
	s.SetWait(wait)
	return s, caller
}

// returns runs f and waits for it to return, failing as a hang after guard.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	within(t, what, done)
}

// TestStreamCallerStopsReading: a caller that takes part of a frame and
// then stops reading does not hold the op: the write gives up, the stream
// is dead (Gone closes, UntilGone's context ends with ErrCallerGone),
// later progress and output — from many goroutines — return without
// writing, and the result is still attempted once: a caller that reads
// again gets the rest of the cut frame, whole, then the result, and
// nothing of what was dropped.
func TestStreamCallerStopsReading(t *testing.T) {
	s, caller := pipeStream(t, nil, 50*time.Millisecond)
	ctx, cancel := UntilGone(context.Background(), s)
	defer cancel()

	head := make(chan []byte, 1)
	go func() {
		b := make([]byte, 10)
		n, _ := io.ReadFull(caller, b)
		head <- b[:n]
	}()
	returns(t, "a progress frame to a caller that stopped reading", func() { s.Progress("start", "api", "first") })
	if !s.Stalled() {
		t.Fatal("Stalled() = false after a write ran out of time")
	}
	within(t, "Gone to close", s.Gone())
	within(t, "UntilGone's context to end", ctx.Done())
	select {
	case <-s.HungUp():
		t.Error("HungUp closed for a caller that only stopped reading: a binky run would end its command")
	default:
	}
	if cause := context.Cause(ctx); !errors.Is(cause, ErrCallerGone) {
		t.Errorf("UntilGone's cause = %v; want ErrCallerGone", cause)
	}
	returns(t, "progress and output on a dead stream", func() {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Progress("dropped", "", "never sent")
				s.Output(i, "stdout", "never sent")
			}()
		}
		wg.Wait()
	})

	got := make(chan []string, 1)
	go func() {
		first := <-head
		var lines []string
		sc := bufio.NewScanner(caller)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if len(lines) == 2 {
				break
			}
		}
		if len(lines) > 0 {
			lines[0] = string(first) + lines[0]
		}
		got <- lines
	}()
	s.Send(api.Frame{Result: json.RawMessage(`{"ok":true}`)})
	lines := within(t, "the caller to read the rest", got)
	if len(lines) != 2 {
		t.Fatalf("the caller read %q; want the cut frame and the result", lines)
	}
	var cutFrame, result api.Frame
	if err := json.Unmarshal([]byte(lines[0]), &cutFrame); err != nil || cutFrame.Progress == nil || cutFrame.Progress.Message != "first" {
		t.Errorf("first line %q (%v); want the whole progress frame the stall cut", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &result); err != nil || string(result.Result) != `{"ok":true}` {
		t.Errorf("second line %q (%v); want the result, nothing dropped in between", lines[1], err)
	}
}

// TestStreamResultToCallerThatNeverReads: the result to a caller that
// never reads is attempted and given up, not waited for.
func TestStreamResultToCallerThatNeverReads(t *testing.T) {
	s, _ := pipeStream(t, nil, 50*time.Millisecond)
	returns(t, "progress to a caller that never reads", func() { s.Progress("start", "", "") })
	returns(t, "the result to a caller that never reads", func() {
		s.Send(api.Frame{Error: &api.Error{Code: api.CodeFailed, Message: "no"}})
	})
	if !s.Stalled() {
		t.Fatal("Stalled() = false")
	}
}

// TestStreamReadingCallerGetsEverything: a caller that reads gets every
// frame in order, progress and output redacted, and the stream never
// goes dead. (Its bound is the daemon's, FrameWait: a busy machine may
// take a moment to schedule the reader.)
func TestStreamReadingCallerGetsEverything(t *testing.T) {
	s, caller := pipeStream(t, func(v string) string { return strings.ReplaceAll(v, "hunter2", "***") }, FrameWait)
	got := make(chan []api.Frame, 1)
	go func() {
		var fs []api.Frame
		sc := bufio.NewScanner(caller)
		for sc.Scan() {
			var f api.Frame
			json.Unmarshal(sc.Bytes(), &f)
			fs = append(fs, f)
			if f.Result != nil {
				break
			}
		}
		got <- fs
	}()
	s.Progress("migrate", "db", "password hunter2")
	s.Output(0, "stdout", "token hunter2\n")
	s.Send(api.Frame{Result: json.RawMessage(`1`)})
	fs := within(t, "the caller to read every frame", got)
	if len(fs) != 3 || fs[0].Progress == nil || fs[0].Progress.Message != "password ***" ||
		fs[1].Output == nil || fs[1].Output.Data != "token ***\n" || string(fs[2].Result) != "1" {
		t.Fatalf("the caller read %+v; want the redacted progress, the redacted output, the result", fs)
	}
	if s.Stalled() {
		t.Error("Stalled() = true for a caller that read everything")
	}
	select {
	case <-s.Gone():
		t.Error("Gone closed for a caller that read everything")
	default:
	}
}

// TestStreamHangUp: a caller that hangs up ends UntilHungUp's context (a
// binky run's command) as well as Gone.
func TestStreamHangUp(t *testing.T) {
	s := NewStream(io.Discard, nil)
	ctx, cancel := UntilHungUp(context.Background(), s)
	defer cancel()
	s.HangUp()
	within(t, "Gone to close", s.Gone())
	within(t, "UntilHungUp's context to end", ctx.Done())
	if cause := context.Cause(ctx); !errors.Is(cause, ErrCallerHungUp) {
		t.Errorf("UntilHungUp's cause = %v; want ErrCallerHungUp", cause)
	}
}
