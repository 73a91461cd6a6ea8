//go:build linux

package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

const runStdinConfig = `
[project]
name = "rin"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
`

// TestRunPipedStdin: binky run -i passes piped stdin on to the command in
// the world's environment, to its end (issue 40 item 3): a line read, and
// 300 KB counted, more than a pipe and a socket buffer hold at once.
func TestRunPipedStdin(t *testing.T) {
	e := newEnv(t, runStdinConfig)
	e.must("up", "p1")

	r := e.binkyStdin("hello\nworld\n", "run", "-i", "p1", "--", "sh", "-c", `read a; echo "got $a in $BINKY_WORKTREE"; cat`)
	if r.code != 0 || r.stdout != "got hello in p1\nworld\n" {
		t.Fatalf("run -i: exit %d, stdout %q, stderr %q; want the piped lines back", r.code, r.stdout, r.stderr)
	}
	big := strings.Repeat("0123456789", 30000)
	r = e.binkyStdin(big, "run", "-i", "p1", "--", "wc", "-c")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "300000" {
		t.Fatalf("run -i | wc -c: exit %d, stdout %q, stderr %q; want 300000", r.code, r.stdout, r.stderr)
	}
	// Without -i the command's stdin is empty, as before: it does not wait.
	r = e.binkyStdin("ignored\n", "run", "p1", "--", "wc", "-c")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "0" {
		t.Fatalf("run without -i: exit %d, stdout %q; want 0 bytes of stdin", r.code, r.stdout)
	}
	// A run whose caller got everything leaves no journal behind.
	if ents, _ := os.ReadDir(filepath.Join(e.home, "runs")); len(ents) != 0 {
		t.Errorf("%d run journals left after their callers finished; want none", len(ents))
	}
}

// TestRunTTY: binky run -it, driven through a pty as a user's terminal,
// gives the command a terminal of its own (tty prints a /dev/pts path,
// stty the caller's size), what is typed reaches it and its echo comes
// back, and ^D ends it with its exit status (issue 40 item 3).
func TestRunTTY(t *testing.T) {
	e := newEnv(t, runStdinConfig)
	e.must("up", "t1")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), "run", "-it", "t1", "--", "sh", "-c", `tty; stty size; echo "wt=$BINKY_WORKTREE"; cat; exit 3`)
	cmd.Dir = e.repo
	cmd.Env = append(e.environ(), e.extra...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 31, Cols: 97})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := &syncBuf{}
	go io.Copy(out, ptmx)

	waitFor(t, "the command's terminal, size and world", func() bool {
		s := out.String()
		return regexp.MustCompile(`/dev/pts/\d+`).MatchString(s) && strings.Contains(s, "31 97") && strings.Contains(s, "wt=t1")
	})
	ptmx.Write([]byte("ping\r"))
	// The line comes back twice: the command's terminal echoes it, cat
	// prints it.
	waitFor(t, "the typed line echoed and printed", func() bool { return strings.Count(out.String(), "ping") >= 2 })
	ptmx.Write([]byte{4}) // ^D: cat's EOF, read by the command's terminal
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("run -it: %v; want exit status 3\noutput:\n%s", err, out.String())
	}
}

// binkyStdin runs the CLI with stdin.
func (e *env) binkyStdin(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), args...)
	cmd.Dir = e.repo
	cmd.Env = append(e.environ(), e.extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("binky %v: %v", args, err)
	}
	return r
}

// syncBuf is a bytes.Buffer safe for a writer and a reader at once.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
