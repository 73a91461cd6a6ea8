//go:build unix

package sdk

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestRunSignalCancelsCall sends SIGTERM to a one-shot call that waits on
// its context: the call must still answer with one JSON object and exit 1.
func TestRunSignalCancelsCall(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd := helperCmd("provision")
			cmd.Stdin = strings.NewReader(`{"protocol":1,"slice":"p","config":{"do":"block"}}`)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			errPipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatalf("start fake adapter: %v", err)
			}
			sc := bufio.NewScanner(errPipe)
			for sc.Scan() && sc.Text() != "ready" {
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatalf("signal fake adapter: %v", err)
			}
			rest, _ := io.ReadAll(errPipe)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit: got %v; want exit status 1 (stderr: %s)", err, rest)
			}
			reply := oneObject(t, stdout.Bytes())
			rerr := DecodeReply(reply, nil)
			if rerr == nil || !strings.Contains(rerr.Error(), "context canceled") {
				t.Errorf("reply: got %s; want ok:false saying the context was cancelled", reply)
			}
		})
	}
}
