package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// guard is how long a test waits for something that must happen before it
// calls it a hang: it detects a hang, it times nothing.
const guard = time.Minute

// TestStalledClientHoldsNoCall: a client that stops reading the server's
// stdout holds up no tool call. A run whose daemon op sends 2,000
// progress frames and 4 MB of output, to a client reading nothing (its
// stdout a pipe with no buffer), gets all of them taken from the daemon
// and its op ends; the progress the queue has no room for is dropped.
// When the client reads again, the answer is there, whole, after the
// notifications that were kept, and none of the run's comes after it.
func TestStalledClientHoldsNoCall(t *testing.T) {
	opDone := make(chan struct{})
	chunk := strings.Repeat("y\n", 1024)
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpRun: func(_ any, h api.Handlers, out any) error {
			for i := range 2000 {
				h.Progress(api.Progress{Step: "queued", Message: fmt.Sprintf("position %d", i)})
				h.Output(api.Output{Stream: "stdout", Data: chunk})
			}
			close(opDone)
			return setResult(api.RunResult{Project: "p", Worktree: "w", ExitCode: 0}, out)
		},
	}}
	s := New(Config{Home: t.TempDir(), Dir: t.TempDir(), Version: "test"})
	s.connect = func(context.Context) (caller, error) { return d, nil }
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // no buffer: a write waits for the client's read
	served := make(chan error, 1)
	go func() {
		served <- s.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	lines := bufio.NewReaderSize(outR, 1<<20)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if _, err := lines.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The client reads nothing from here on, until the op ended.
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"worktree":"w","command":"yes"},"_meta":{"progressToken":"p"}}}`)
	select {
	case <-opDone:
	case <-time.After(guard):
		t.Fatalf("hang: the run's daemon op waited %s on a client that reads nothing", guard)
	}

	progress := 0
	for {
		b, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read the server's stdout: %v", err)
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200q", err, b)
		}
		if m.Method == "notifications/progress" {
			progress++
			continue
		}
		if m.ID == nil || *m.ID != 2 {
			t.Fatalf("unexpected message %.300s", b)
		}
		var r toolResult
		if err := json.Unmarshal(m.Result, &r); err != nil || r.IsError || len(r.Content) != 2 {
			t.Fatalf("run: got %.600s; want its result", b)
		}
		var res RunResult
		if err := json.Unmarshal(r.Structured, &res); err != nil || res.ExitCode != 0 || !strings.HasSuffix(res.OutputTail, "y\ny\n") {
			t.Errorf("run result: got %+v (%v); want exit 0 and the tail of its output", res, err)
		}
		break
	}
	if progress == 0 || progress > queueLen+1 {
		t.Errorf("got %d progress notifications before the answer; want 1 to %d (what the queue held, the rest dropped)", progress, queueLen+1)
	}
	inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after stdin EOF: %v; want nil", err)
		}
	case <-time.After(guard):
		t.Fatal("hang: Serve did not return after stdin EOF")
	}
	if rest, _ := io.ReadAll(lines); strings.Contains(string(rest), `"progressToken":"p"`) {
		t.Errorf("a progress notification of the run came after its answer: %.300s", rest)
	}
}
