package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/hashicorp/go-hclog"
)

const maxMessage = sdk.MaxMessage

// drainGrace bounds how long a finished call waits for the adapter's stdout
// and stderr to reach end of file once its process group has been killed (a
// child that escaped the group could hold them open forever).
const drainGrace = 2 * time.Second

// Binary is one adapter executable. The zero value is not usable: set Path.
type Binary struct {
	// Path is the executable.
	Path string
	// Env is the adapter's whole environment. Nil means
	// MinimalEnv(os.Environ()); secrets never belong here.
	Env []string
	// Stderr, when set, receives what the adapter wrote on stderr (at most
	// the last StderrLimit bytes): once per one-shot call, and for an RPC
	// session after each call and at Close. The text may hold secrets the
	// adapter printed; redact before logging.
	Stderr func([]byte)
	// Logger receives go-plugin's own messages in the RPC tier (never the
	// adapter's stderr, which goes to Stderr only). Nil: discarded.
	Logger hclog.Logger
}

// Label is how errors name the adapter: the binary's file name.
func (b *Binary) Label() string { return filepath.Base(b.Path) }

func (b *Binary) env() []string {
	if b.Env != nil {
		return b.Env
	}
	return MinimalEnv(os.Environ())
}

func (b *Binary) handStderr(t []byte) {
	if b.Stderr != nil && len(t) > 0 {
		b.Stderr(t)
	}
}

// Call runs one call in the one-shot tier: req is encoded as the request
// (a []byte or json.RawMessage is sent as is) and the reply decoded into
// resp (which may be nil). An ok:false reply is returned as an error
// wrapping *sdk.Error with the adapter's code.
func (b *Binary) Call(ctx context.Context, call string, req, resp any) error {
	return callJSON(ctx, b, call, req, resp)
}

// CallRaw runs `<binary> <call>` with request on stdin and returns the one
// JSON object it printed, whether it says ok or not. The error covers
// everything that is not a well-formed reply: the binary would not start, the
// deadline passed (the process group is then killed and reaped), stdout was
// empty, not JSON, more than one value or over 1 MiB, or ok:true came with a
// non-zero exit status.
func (b *Binary) CallRaw(ctx context.Context, call string, request []byte) ([]byte, error) {
	label := b.Label() + " " + call
	if len(request) > maxMessage {
		return nil, fmt.Errorf("%s: request is %d bytes; the limit is %d (1 MiB)", label, len(request), maxMessage)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: not started: %w", label, err)
	}
	start := time.Now()
	res, err := runOnce(ctx, b.Path, call, request, b.env())
	b.handStderr(res.stderr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	switch {
	case res.timedOut:
		return nil, fmt.Errorf("%s: %s; its process group was killed: %w", label, deadlineText(ctx, start), context.Cause(ctx))
	case res.tooBig:
		return nil, fmt.Errorf("%s: reply is larger than the 1 MiB limit (the adapter was killed); first %d bytes of stdout: %s",
			label, SnippetLen, Snippet(res.stdout))
	}
	if res.state.ExitCode() == 2 && len(bytes.TrimSpace(res.stdout)) == 0 {
		// A one-shot adapter's usage error: it does not know this call
		// (one of a newer protocol, such as size). The host and the
		// conformance kit read code invalid as "no such call".
		return nil, fmt.Errorf("%s: %w", label, sdk.Errorf(sdk.CodeInvalid, "the adapter does not know the call %q: it exited 2 with no reply, a one-shot adapter's usage error", call))
	}
	reply, perr := CheckReply(res.stdout)
	if perr != nil {
		return nil, fmt.Errorf("%s: %v (%s); first %d bytes of stdout: %s — an adapter prints exactly one JSON object on stdout and diagnostics on stderr",
			label, perr, exitText(res.state), SnippetLen, Snippet(res.stdout))
	}
	if code := res.state.ExitCode(); code != 0 && replyOK(reply) {
		return nil, fmt.Errorf("%s: replied ok:true but %s; an adapter exits 0 exactly when it replies ok", label, exitText(res.state))
	}
	return reply, nil
}

// deadlineText says how long the call was allowed to run.
func deadlineText(ctx context.Context, start time.Time) string {
	if d, ok := ctx.Deadline(); ok {
		// To 10ms: the deadline was set a moment before start was read.
		return "timed out after " + d.Sub(start).Round(10*time.Millisecond).String()
	}
	return "was cancelled after " + time.Since(start).Round(time.Millisecond).String()
}

func exitText(st *os.ProcessState) string {
	if st == nil {
		return "did not exit"
	}
	if c := st.ExitCode(); c >= 0 {
		return fmt.Sprintf("exit status %d", c)
	}
	return "killed by " + st.String()
}

type runResult struct {
	stdout   []byte
	tooBig   bool
	stderr   []byte
	state    *os.ProcessState
	timedOut bool
}

// runOnce runs one adapter process to completion. It uses plain pipes (not
// exec's copying goroutines) so that Wait returns as soon as the adapter
// exits, even when a child it left behind still holds stdout open; that child
// is then killed with the rest of the group.
func runOnce(ctx context.Context, path, call string, request []byte, env []string) (runResult, error) {
	var res runResult
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return res, fmt.Errorf("create stdin pipe: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return res, fmt.Errorf("create stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return res, fmt.Errorf("create stderr pipe: %w", err)
	}
	defer closeAll()

	// On Windows the adapter runs in a job of its own (the group's twin);
	// closing it ends whatever is left in it.
	j := newJob()
	defer j.close()
	cmd, err := startRetrying(j.start, func() *exec.Cmd {
		cmd := exec.Command(path, call)
		cmd.Env = env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		ownGroup(cmd)
		return cmd
	})
	kill := func() {
		killGroup(cmd)
		j.kill()
	}
	// The child holds its own copies of these ends now.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		return res, fmt.Errorf("start %s: %w", path, err)
	}

	go func() {
		// EPIPE (the adapter exited without reading) is not our concern:
		// its reply says what went wrong.
		_, _ = inW.Write(request)
		_ = inW.Close()
	}()

	var stdout []byte
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		var tooBig bool
		stdout, tooBig = readLimited(outR, maxMessage)
		if tooBig {
			res.tooBig = true
			kill()
		}
	}()
	stderr := newTail(StderrLimit)
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(stderr, errR)
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		res.timedOut = true
		kill()
		werr = <-waited
	}
	// Whatever the adapter left running in its group (or job) goes now.
	kill()

	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	for _, done := range []chan struct{}{outDone, errDone} {
		select {
		case <-done:
		case <-grace.C:
			// Something outside the group holds a pipe: stop reading.
			_ = outR.Close()
			_ = errR.Close()
			<-done
		}
	}
	res.stdout = stdout
	res.stderr = stderr.take()
	res.state = cmd.ProcessState
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) {
		return res, fmt.Errorf("wait for %s: %w", path, werr)
	}
	return res, nil
}

// readLimited reads r to EOF, keeping at most limit+1 bytes; it reports
// whether r held more than limit bytes (it stops reading then).
func readLimited(r io.Reader, limit int) ([]byte, bool) {
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > limit {
			return buf, true
		}
		if err != nil {
			return buf, false
		}
	}
}
