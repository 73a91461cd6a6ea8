package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/binkyhq/binky/internal/wine"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
)

// TestPanickingOpAnswersAndDaemonServesOn: an op that panics (a bug) gets
// its caller an internal error naming the op; the daemon stays up and the
// next call is served.
func TestPanickingOpAnswersAndDaemonServesOn(t *testing.T) {
	wine.Skip(t, "Wine 8 has no AF_UNIX sockets")
	d := New(Options{Home: t.TempDir(), Logger: hclog.NewNullLogger()})
	d.handlers["boom"] = func(context.Context, json.RawMessage, *stream) (any, error) {
		var ops []string
		return ops[len(ops)], nil // index out of range: panics
	}
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.serve(ctx, ln); close(done) }()
	defer func() { cancel(); ln.Close(); <-done }()

	call := func(op string) api.Frame {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		b, _ := json.Marshal(api.Request{Op: op})
		c.Write(append(b, '\n'))
		sc := bufio.NewScanner(c)
		var last api.Frame
		for sc.Scan() {
			last = api.Frame{}
			if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
				t.Fatalf("%s: reply %q: %v", op, sc.Text(), err)
			}
			if last.Error != nil || last.Result != nil {
				break
			}
		}
		return last
	}
	f := call("boom")
	if f.Error == nil || f.Error.Code != api.CodeInternal || !strings.Contains(f.Error.Message, "boom") {
		t.Fatalf("panicking op answered %+v; want an internal error naming it", f)
	}
	if f := call(api.OpPing); f.Error != nil || f.Result == nil {
		t.Fatalf("ping after the panic: %+v", f)
	}
}
