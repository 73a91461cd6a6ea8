//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mcpGuard is how long the stalled-client test waits for something that
// must happen before it calls it a hang: it detects a hang, it times
// nothing.
const mcpGuard = time.Minute

// stalledMCP is a `binky mcp` process run as an agent runs it, over stdio,
// by a client that can stop reading its stdout: the server's stdout is a
// pipe of one page that this test reads only when it chooses to.
type stalledMCP struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *os.File // the pipe's read end
	outBuf *bufio.Reader
	mu     sync.Mutex
	errb   strings.Builder
	exited chan error
}

func (e *env) startStalledMCP() *stalledMCP {
	e.t.Helper()
	t := e.t
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// One page: a single answer fills it, so the server surely blocks
	// writing its stdout once the client stops reading.
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
		t.Fatalf("shrink the stdout pipe: %v", err)
	}
	c := &stalledMCP{t: t, out: r, outBuf: bufio.NewReaderSize(r, 1<<20), exited: make(chan error, 1)}
	c.cmd = exec.Command(filepath.Join(binDir, "binky"), "mcp", "--log-level", "info")
	c.cmd.Dir = e.repo
	c.cmd.Env = e.environ()
	c.cmd.Stdout = w
	c.cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.errb.Write(p)
	})
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		r.Close()
		<-c.exited
	})
	return c
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (c *stalledMCP) serverLog() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errb.String()
}

func (c *stalledMCP) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to binky mcp: %v", err)
	}
}

// unread is how many bytes the server wrote that the client has not read.
func (c *stalledMCP) unread() int {
	n, err := unix.IoctlGetInt(int(c.out.Fd()), unix.TIOCINQ) // FIONREAD
	if err != nil {
		c.t.Fatalf("FIONREAD on the stdout pipe: %v", err)
	}
	return n
}

// mcpLine is one JSON-RPC message from the server.
type mcpLine struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// readUntil reads the server's messages until the answer to id, and
// returns them all, that answer last.
func (c *stalledMCP) readUntil(id int) []mcpLine {
	c.t.Helper()
	type got struct {
		m   mcpLine
		err error
	}
	ch := make(chan got, 1)
	var all []mcpLine
	for {
		go func() {
			b, err := c.outBuf.ReadBytes('\n')
			var m mcpLine
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			ch <- got{m, err}
		}()
		select {
		case g := <-ch:
			if g.err != nil {
				c.t.Fatalf("read binky mcp's stdout: %v\nserver stderr:\n%s", g.err, c.serverLog())
			}
			all = append(all, g.m)
			if g.m.ID != nil && *g.m.ID == id && g.m.Method == "" {
				return all
			}
		case <-time.After(mcpGuard):
			c.t.Fatalf("hang: no answer to request %d within %s\nserver stderr:\n%s", id, mcpGuard, c.serverLog())
		}
	}
}

// binkyWithin runs the CLI and fails the test, as a hang, when it has not
// ended within mcpGuard, or on a non-zero exit.
func (e *env) binkyWithin(args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), args...)
	cmd.Dir = e.repo
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		e.t.Fatalf("hang: binky %s did not end within %s\n%s\ndaemon log:\n%s", strings.Join(args, " "), mcpGuard, out, e.daemonLog())
	}
	if err != nil {
		e.t.Fatalf("binky %s: %v\n%s\ndaemon log:\n%s", strings.Join(args, " "), err, out, e.daemonLog())
	}
	return string(out)
}

// processesOf lists live processes of e: those whose environment names
// e's BINKY_HOME (the daemon, `binky mcp`, the world's services and
// commands) or that run in e's directories.
func processesOf(e *env) []string {
	base := filepath.Dir(e.repo)
	ents, _ := os.ReadDir("/proc")
	var found []string
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if strings.Contains("\x00"+string(env), "\x00BINKY_HOME="+e.home+"\x00") || strings.HasPrefix(cwd, base+string(filepath.Separator)) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	return found
}

// TestStalledMCPClientFreezesNothing: an agent's MCP client that stops
// reading `binky mcp`'s stdout while a tool call streams output freezes
// neither the world, nor the daemon, nor the MCP server's call. The
// client fills the server's stdout (one page) and stops reading; then a
// run printing 5 MB starts in world s1. While the client reads nothing:
// the run's output still drains from the daemon (its command gets past
// it), another client's `binky status` and `binky down s1` complete, the
// MCP server gets the run's end from the daemon (it logs the call), and
// `binky daemon stop` completes. When the client reads again, every
// answer is there — progress notifications may have been dropped, never a
// result — the server exits on stdin EOF, the daemon never saw a caller
// that stopped reading, and no process of the test is left.
func TestStalledMCPClientFreezesNothing(t *testing.T) {
	e := newEnv(t, stallConfig)
	e.must("up", "s1")
	c := e.startStalledMCP()
	c.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "stalled", "version": "0"},
	}})
	c.readUntil(1)
	c.send(map[string]any{"method": "notifications/initialized"})

	// Stop reading: answers to tools/list fill the pipe.
	full := os.Getpagesize()
	id := 1
	for c.unread() < full {
		before := c.unread()
		id++
		if id > 50 {
			t.Fatalf("the stdout pipe holds %d bytes after 48 tools/list answers; want %d", before, full)
		}
		c.send(map[string]any{"id": id, "method": "tools/list", "params": map[string]any{}})
		waitFor(t, "the tools/list answer to reach the pipe", func() bool { return c.unread() > before })
	}
	lastList := id

	// A run that floods its output, says so, then waits to be let go.
	dir := t.TempDir()
	flooded, release := filepath.Join(dir, "flooded"), filepath.Join(dir, "release")
	command := fmt.Sprintf("yes | head -c 5000000; touch %s; while [ ! -e %s ]; do sleep 0.05; done; echo run-released", flooded, release)
	const runID = 100
	c.send(map[string]any{"id": runID, "method": "tools/call", "params": map[string]any{
		"name": "run", "arguments": map[string]any{"worktree": "s1", "command": command},
		"_meta": map[string]any{"progressToken": "run-1"},
	}})
	waitFor(t, "the run's command to get past its 5 MB of output", func() bool {
		_, err := os.Stat(flooded)
		return err == nil
	})

	// Another client, the same world, the MCP client still reading nothing.
	e.binkyWithin("status")
	e.binkyWithin("down", "s1")
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The MCP server logs a call once the daemon answered it: it kept
	// reading the daemon although it could not write its own stdout.
	waitFor(t, "binky mcp to get the run's end from the daemon while its client reads nothing", func() bool {
		return strings.Contains(c.serverLog(), "tool call: tool=run")
	})
	e.binkyWithin("daemon", "stop")
	if got := c.unread(); got < full {
		t.Fatalf("the stdout pipe holds %d bytes; want it still full (%d): the client was to read nothing so far", got, full)
	}

	// Read again: every answer is there, the run's result last.
	msgs := c.readUntil(runID)
	answered := map[int]bool{}
	for _, m := range msgs {
		if m.ID != nil && m.Method == "" {
			answered[*m.ID] = true
		}
	}
	for i := 2; i <= lastList; i++ {
		if !answered[i] {
			t.Errorf("no answer to tools/list %d; want every answer (only progress may be dropped)", i)
		}
	}
	last := msgs[len(msgs)-1]
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError    bool `json:"isError"`
		Structured struct {
			ExitCode   *int   `json:"exit_code"`
			OutputTail string `json:"output_tail"`
			Error      any    `json:"error"`
		} `json:"structuredContent"`
	}
	if len(last.Error) > 0 || json.Unmarshal(last.Result, &res) != nil {
		t.Fatalf("run: got %s %s; want a tool result", last.Error, last.Result)
	}
	if res.Structured.ExitCode == nil || res.Structured.Error != nil || !strings.Contains(res.Structured.OutputTail, "y\ny\ny\n") {
		t.Errorf("run: got %.600s; want the run's own result (exit_code, the tail of its output), not a lost stream", last.Result)
	} else {
		t.Logf("run, read after the stall: %s (%d messages)", res.Content[0].Text, len(msgs))
	}

	// stdin EOF ends the server.
	c.in.Close()
	select {
	case err := <-c.exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Errorf("binky mcp: %v", err)
		} else if err != nil {
			t.Errorf("binky mcp exited %d after stdin EOF; want 0\n%s", ee.ExitCode(), c.serverLog())
		}
		c.exited <- err // for the cleanup
	case <-time.After(mcpGuard):
		t.Fatalf("hang: binky mcp did not exit within %s of stdin EOF\n%s", mcpGuard, c.serverLog())
	}
	log := read(filepath.Join(e.home, "daemon.log"))
	if strings.Contains(log, "a caller stopped reading") {
		t.Errorf("the daemon saw a caller that stopped reading: binky mcp let its client's stall reach the daemon\n%s", e.daemonLog())
	}
	waitFor(t, "no process of the test to be left", func() bool { return len(processesOf(e)) == 0 })
}
