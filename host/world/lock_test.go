package world

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// guard is how long a test waits for something that must happen before it
// calls it a hang: it detects a hang, it times nothing.
const guard = 30 * time.Second

// frames reads the frames a stream writes into w, one per line.
func frames(t *testing.T) (*Stream, <-chan api.Frame) {
	t.Helper()
	r, w := io.Pipe()
	t.Cleanup(func() { r.Close() })
	out := make(chan api.Frame, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var f api.Frame
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				t.Errorf("frame %q: %v", sc.Text(), err)
				return
			}
			out <- f
		}
	}()
	return NewStream(w, nil), out
}

// within waits for ch, failing as a hang after guard.
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("hang: %s did not happen within %s", what, guard)
		panic("unreachable")
	}
}

// TestLockWaiterToldAndCancelled: a waiter is told which op holds the lock,
// of which world and since when; cancelling its context ends the wait
// with that in the error and without the lock, which stays its holder's
// until released, and then is free.
func TestLockWaiterToldAndCancelled(t *testing.T) {
	var l Lock
	if err := l.Lock(context.Background(), nil, "up", "feat-a"); err != nil {
		t.Fatal(err)
	}
	s, out := frames(t)
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- l.Lock(ctx, s, "down", "feat-a") }()

	f := within(t, "the waiting message", out)
	if f.Progress == nil || f.Progress.Step != "lock" || !strings.HasPrefix(f.Progress.Message, "waiting for the up of feat-a started ") || !strings.HasSuffix(f.Progress.Message, " s ago") {
		t.Fatalf("the waiter was told %+v; want the progress step lock saying \"waiting for the up of feat-a started N s ago\"", f.Progress)
	}
	cancel()
	err := within(t, "the cancelled wait to end", waited)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped waiting for the up of feat-a started ") {
		t.Fatalf("the cancelled wait returned %v; want context.Canceled, naming what it waited for", err)
	}
	if h, held := l.Holder(); !held || h.Op != "up" || h.What != "feat-a" {
		t.Fatalf("after the cancelled wait the holder is %+v (held %v); want the up of feat-a", h, held)
	}
	l.Unlock()
	if h, held := l.Holder(); held {
		t.Fatalf("after the holder released it the lock is held by %+v; the cancelled waiter must not take it", h)
	}
	if !l.TryLock("restart", "feat-a") {
		t.Fatal("TryLock of the free lock failed")
	}
}

// TestLockWaiterTakesItOnRelease: a waiter takes the lock once its holder
// releases it, and is then its holder; TryLock fails while it is held.
func TestLockWaiterTakesItOnRelease(t *testing.T) {
	var l Lock
	if !l.TryLock("up", "feat-a") {
		t.Fatal("TryLock of a free lock failed")
	}
	if l.TryLock("suspend", "feat-a") {
		t.Fatal("TryLock of a held lock succeeded")
	}
	s, out := frames(t)
	waited := make(chan error, 1)
	go func() { waited <- l.Lock(context.Background(), s, "down", "feat-a") }()
	within(t, "the waiting message", out)
	l.Unlock()
	if err := within(t, "the waiter to take the lock", waited); err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	if h, held := l.Holder(); !held || h.Op != "down" {
		t.Fatalf("the holder is %+v (held %v); want the down", h, held)
	}
}

// TestAgo: how long ago a holder started, for a person.
func TestAgo(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0 s"},
		{0, "0 s"},
		{40*time.Second + 700*time.Millisecond, "40 s"},
		{3*time.Minute + 5*time.Second, "3 min"},
		{2*time.Hour + 5*time.Minute, "2 h 5 min"},
	} {
		if got := ago(tt.d); got != tt.want {
			t.Errorf("ago(%s) = %q; want %q", tt.d, got, tt.want)
		}
	}
	h := Holder{Op: "up", What: "feat-a", Since: time.Unix(1000, 0)}
	if got, want := h.WaitingFor(time.Unix(1040, 0)), "waiting for the up of feat-a started 40 s ago"; got != want {
		t.Errorf("WaitingFor = %q; want %q", got, want)
	}
}
