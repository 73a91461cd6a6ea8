package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpConfig is demoConfig with [agents] checks that pass, and a worker
// whose command carries an ${env.NAME} value that only the MCP server's own
// environment holds (the daemon is started without it).
const mcpConfig = `
[project]
name = "agents"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "binky-demo-app migrate --db '${self.url}'"
seed    = "binky-demo-app seed --db '${self.url}'"

[services.api]
cmd        = "binky-demo-app serve --db '${db.url}' --name '${worktree.name}'"
url        = "api"
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[services.worker]
cmd = "printf '%s' '${env.MCP_GREETING}' > greeting.txt && exec sleep 600"

[agents]
expose = ["api", "db"]
verify = ["test -n \"$BINKY_API_URL\" && echo api at $BINKY_API_URL", "true"]
`

// mcpClient is the official go-sdk client connected to a `binky mcp`
// process it spawned, with the progress notifications it received.
type mcpClient struct {
	t      *testing.T
	cs     *sdk.ClientSession
	stderr *bytes.Buffer

	mu       sync.Mutex
	progress map[any][]string // token → messages
}

// startMCP spawns `binky mcp` in the test repository with the test's
// environment plus extra, and connects the go-sdk client to it.
func (e *env) startMCP(extra ...string) *mcpClient {
	e.t.Helper()
	return e.startMCPAt(e.repo, extra...)
}

// startMCPAt is startMCP with the server started in dir.
func (e *env) startMCPAt(dir string, extra ...string) *mcpClient {
	e.t.Helper()
	c := &mcpClient{t: e.t, stderr: &bytes.Buffer{}, progress: map[any][]string{}}
	cmd := exec.Command(filepath.Join(binDir, "binky"), "mcp", "--log-level", "info")
	cmd.Dir = dir
	cmd.Env = append(e.environ(), extra...)
	cmd.Stderr = &lockedBuffer{b: c.stderr, mu: &c.mu}
	client := sdk.NewClient(&sdk.Implementation{Name: "binky-e2e", Version: "0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			defer c.mu.Unlock()
			tok := fmt.Sprint(req.Params.ProgressToken)
			c.progress[tok] = append(c.progress[tok], req.Params.Message)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("connect the go-sdk client to binky mcp: %v", err)
	}
	c.cs = cs
	e.t.Cleanup(func() { cs.Close() })
	return c
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// callResult is one tool call as the client saw it.
type callResult struct {
	summary    string
	json       string
	structured json.RawMessage
	isError    bool
}

// call calls a tool (with a progress token when token is not empty) and
// fails the test on a protocol error: failures must be tool results.
func (c *mcpClient) call(tool string, args map[string]any, token string) callResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		c.t.Fatalf("tools/call %s %v: protocol error %v; want a tool result\nserver stderr:\n%s", tool, args, err, c.serverLog())
	}
	var texts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 2 {
		c.t.Fatalf("tools/call %s: got %d text contents %q; want 2 (summary, JSON)", tool, len(texts), texts)
	}
	if strings.Contains(texts[0], "\n") {
		c.t.Errorf("tools/call %s: summary spans several lines: %q", tool, texts[0])
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		c.t.Fatalf("tools/call %s: no structuredContent (%v)", tool, err)
	}
	var fromText, fromStructured any
	json.Unmarshal([]byte(texts[1]), &fromText)
	json.Unmarshal(structured, &fromStructured)
	if fmt.Sprint(fromText) != fmt.Sprint(fromStructured) {
		c.t.Errorf("tools/call %s: JSON text content differs from structuredContent:\n%s\n%s", tool, texts[1], structured)
	}
	return callResult{summary: texts[0], json: texts[1], structured: structured, isError: res.IsError}
}

// progressFor returns the progress messages received for token, waiting
// (up to 10s) until there are at least atLeast: the go-sdk client hands
// notifications to its handler on another goroutine, so the last ones may
// land just after the call returned.
func (c *mcpClient) progressFor(token string, atLeast int) []string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		got := append([]string(nil), c.progress[token]...)
		c.mu.Unlock()
		if len(got) >= atLeast || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *mcpClient) serverLog() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stderr.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

func decodeAs[T any](t *testing.T, r callResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.structured, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r.structured, err)
	}
	return v
}

// mcpWorld is the part of api.World the tests read.
type mcpWorld struct {
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Branch   string `json:"branch"`
	Path     string `json:"path"`
	State    string `json:"state"`
	Services []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	} `json:"services"`
	Verify *struct {
		Passed bool   `json:"passed"`
		Commit string `json:"commit"`
		Checks []struct {
			Cmd    string `json:"cmd"`
			Passed bool   `json:"passed"`
		} `json:"checks"`
	} `json:"verify"`
}

type mcpVerify struct {
	Worktree string `json:"worktree"`
	Passed   bool   `json:"passed"`
	Commit   string `json:"commit"`
	Error    string `json:"error"`
	Checks   []struct {
		Cmd        string `json:"cmd"`
		ExitCode   int    `json:"exit_code"`
		Passed     bool   `json:"passed"`
		OutputTail string `json:"output_tail"`
		Truncated  bool   `json:"truncated"`
	} `json:"checks"`
}

type mcpError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMCPAgentLoop drives `binky mcp` with the official go-sdk client (a
// different implementation from the server's mcp-go) through the loop an
// orchestrator runs: up, env, verify (passing and failing), status, down.
func TestMCPAgentLoop(t *testing.T) {
	start := time.Now()
	e := newEnv(t, mcpConfig)
	// The daemon runs without MCP_GREETING: up must forward the server's value.
	e.must("daemon", "start")
	c := e.startMCP("MCP_GREETING=hello-from-mcp")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lt, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	checkToolSchemas(t, lt.Tools)

	// up two worlds; progress arrives for the token.
	pass := decodeAs[mcpWorld](t, mustOK(t, c, "up", map[string]any{"branch": "feat/pass"}, "up-pass"))
	if pass.State != "up" || pass.Branch != "feat/pass" || pass.Project != e.project {
		t.Errorf("up feat/pass: got %+v; want project %s, branch feat/pass, state up", pass, e.project)
	}
	if p := c.progressFor("up-pass", 1); len(p) == 0 {
		t.Errorf("up sent no progress notifications for its token")
	}
	fail := decodeAs[mcpWorld](t, mustOK(t, c, "up", map[string]any{"branch": "feat/fail", "repo": e.repo}, ""))
	b, err := os.ReadFile(filepath.Join(pass.Path, "greeting.txt"))
	if err != nil || string(b) != "hello-from-mcp" {
		t.Errorf("worker saw ${env.MCP_GREETING} = %q (%v); want the MCP server's value hello-from-mcp", b, err)
	}
	head := strings.TrimSpace(e.git("rev-parse", "HEAD"))

	// verify reads the worktree's binky.toml: give feat/fail a failing check.
	cfgPath := filepath.Join(fail.Path, "binky.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	failing := strings.Replace(string(cfg), `"true"]`, `"true", "echo boom-from-check >&2; exit 3"]`, 1)
	if failing == string(cfg) {
		t.Fatal("could not add a failing check to the config")
	}
	if err := os.WriteFile(cfgPath, []byte(failing), 0o644); err != nil {
		t.Fatal(err)
	}

	// env: exactly the exposed keys.
	env := mustOK(t, c, "env", map[string]any{"worktree": "feat/pass"}, "")
	var er struct {
		Env       map[string]string `json:"env"`
		Variables map[string]string `json:"variables"`
	}
	json.Unmarshal(env.structured, &er)
	if got := strings.Join(sortedKeysOf(er.Env), ","); got != "api,db" {
		t.Errorf("env keys: got %s; want api,db", got)
	}
	if got := strings.Join(sortedKeysOf(er.Variables), ","); got != "BINKY_API_DIRECT_URL,BINKY_API_URL,BINKY_DB_URL" {
		t.Errorf("env variables: got %s; want BINKY_API_DIRECT_URL,BINKY_API_URL,BINKY_DB_URL", got)
	}
	if !strings.Contains(er.Env["api"], "api."+pass.Worktree+"."+e.project+".localhost") {
		t.Errorf("env api = %q; want the proxied URL", er.Env["api"])
	}
	// An unknown world is a tool error, not a protocol error.
	unknown := c.call("env", map[string]any{"worktree": "no-such-branch"}, "")
	if ue := decodeAs[mcpError](t, unknown); !unknown.isError || ue.Error.Code != "not_found" {
		t.Errorf("env of an unknown world: got isError=%v %s; want isError with code not_found", unknown.isError, unknown.json)
	}

	// A passing and a failing verify.
	ok := decodeAs[mcpVerify](t, mustOK(t, c, "verify", map[string]any{"worktree": "feat/pass"}, "verify-pass"))
	if !ok.Passed || len(ok.Checks) != 2 || ok.Commit != head || !strings.Contains(ok.Checks[0].OutputTail, "api at http") {
		t.Errorf("passing verify: got %+v; want 2 passed checks at %s, the first printing the API URL", ok, head)
	}
	if p := c.progressFor("verify-pass", 2); len(p) < 2 {
		t.Errorf("verify sent %d progress notifications %q; want at least one per check", len(p), p)
	}
	bad := c.call("verify", map[string]any{"worktree": "feat/fail"}, "verify-fail")
	if !bad.isError {
		t.Fatalf("failing verify: isError false; want true: %s", bad.json)
	}
	if !strings.Contains(bad.summary, "echo boom-from-check >&2; exit 3") || !strings.Contains(bad.summary, "exit 3") {
		t.Errorf("failing verify summary %q; want the failed check and its exit code", bad.summary)
	}
	bv := decodeAs[mcpVerify](t, bad)
	if bv.Passed || len(bv.Checks) != 3 || bv.Checks[2].Passed || bv.Checks[2].ExitCode != 3 ||
		!strings.Contains(bv.Checks[2].OutputTail, "boom-from-check") || !bv.Checks[0].Passed || bv.Error == "" {
		t.Errorf("failing verify result: got %+v; want checks 1-2 passed, check 3 failed with exit 3 and its output", bv)
	}

	// status: the latest verify of each world.
	st := mustOK(t, c, "status", nil, "")
	var sr struct {
		Worlds []mcpWorld `json:"worlds"`
	}
	json.Unmarshal(st.structured, &sr)
	if len(sr.Worlds) != 2 {
		t.Fatalf("status: got %d worlds; want 2: %s", len(sr.Worlds), st.json)
	}
	for _, w := range sr.Worlds {
		want := w.Branch == "feat/pass"
		if w.Verify == nil || w.Verify.Passed != want || w.Verify.Commit != head {
			t.Errorf("status of %s: verify %+v; want passed=%v at %s", w.Branch, w.Verify, want, head)
		}
	}
	if !strings.Contains(st.summary, "verify passed") || !strings.Contains(st.summary, "verify failed") {
		t.Errorf("status summary %q; want both verify results", st.summary)
	}

	// down both.
	for _, br := range []string{"feat/pass", fail.Worktree} {
		d := decodeAs[mcpWorld](t, mustOK(t, c, "down", map[string]any{"worktree": br}, ""))
		if d.State != "down" {
			t.Errorf("down %s: state %q; want down", br, d.State)
		}
	}
	for _, w := range e.status().Worlds {
		for _, s := range w.Services {
			if s.Kind == "cmd" && s.Pid != 0 {
				t.Errorf("after down, %s/%s still has pid %d", w.Worktree, s.Name, s.Pid)
			}
		}
	}
	if err := c.cs.Close(); err != nil {
		t.Errorf("close the session (stdin EOF): %v; want the server to exit cleanly\n%s", err, c.serverLog())
	}
	t.Logf("MCP agent loop took %v", time.Since(start).Round(time.Millisecond))
}

func mustOK(t *testing.T, c *mcpClient, tool string, args map[string]any, token string) callResult {
	t.Helper()
	r := c.call(tool, args, token)
	if r.isError {
		t.Fatalf("%s %v: tool error: %s\n%s\nserver stderr:\n%s", tool, args, r.summary, r.json, c.serverLog())
	}
	return r
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkToolSchemas wants exactly the thirteen tools, each argument a described
// string (lines a number), worktree required where a world must be named.
func checkToolSchemas(t *testing.T, tools []*sdk.Tool) {
	t.Helper()
	want := map[string]struct{ props, required string }{
		"up":           {"all,branch,except,only,profile,repo", ""},
		"down":         {"project,repo,worktree", ""},
		"status":       {"project,repo,worktree", ""},
		"env":          {"project,repo,worktree", ""},
		"verify":       {"project,repo,worktree", ""},
		"logs":         {"grep,lines,project,repo,service,worktree", ""},
		"browser_logs": {"lines,project,repo,service,since_up,worktree", ""},
		"reset":        {"project,repo,service,worktree", ""},
		"restart":      {"project,repo,service,worktree", ""},
		"ports":        {"project,repo,worktree", ""},
		"run":          {"command,project,repo,worktree", "command"},
		"stop":         {"project,repo,service,worktree", "service"},
		"start":        {"project,repo,service,worktree", "service"},
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Errorf("tool %s input schema: %v", tool.Name, err)
			continue
		}
		if schema.Type != "object" {
			t.Errorf("tool %s schema type %q; want object", tool.Name, schema.Type)
		}
		if got := strings.Join(sortedKeysOf(schema.Properties), ","); got != w.props {
			t.Errorf("tool %s properties: got %s; want %s", tool.Name, got, w.props)
		}
		if got := strings.Join(schema.Required, ","); got != w.required {
			t.Errorf("tool %s required: got %q; want %q", tool.Name, got, w.required)
		}
		for name, p := range schema.Properties {
			if p["type"] != "string" && !(name == "lines" && p["type"] == "number") && !((name == "all" || name == "since_up") && p["type"] == "boolean") {
				t.Errorf("tool %s argument %s: type %v; want string", tool.Name, name, p["type"])
			}
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("tool %s argument %s has no description", tool.Name, name)
			}
		}
	}
	sort.Strings(names)
	if want := "browser_logs,down,env,logs,ports,reset,restart,run,start,status,stop,up,verify"; strings.Join(names, ",") != want {
		t.Errorf("tools: got %s; want exactly %s", strings.Join(names, ","), want)
	}
}

// rawMCP is `binky mcp` spawned with plain pipes, spoken to in raw
// JSON-RPC, with every stdout line recorded.
type rawMCP struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}

	mu     sync.Mutex
	all    []string
	stderr bytes.Buffer
	id     int
}

func (e *env) startRawMCP() *rawMCP {
	e.t.Helper()
	r := &rawMCP{t: e.t, lines: make(chan string, 4096), done: make(chan struct{})}
	r.cmd = exec.Command(filepath.Join(binDir, "binky"), "mcp")
	r.cmd.Dir = e.repo
	r.cmd.Env = e.environ()
	r.cmd.Stderr = &lockedBuffer{b: &r.stderr, mu: &r.mu}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		e.t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		defer close(r.lines)
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				r.mu.Lock()
				r.all = append(r.all, line)
				r.mu.Unlock()
				r.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() {
		r.stdin.Close()
		r.cmd.Process.Kill()
		r.cmd.Wait()
	})
	r.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "raw", "version": "0"},
	})
	r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return r
}

func (r *rawMCP) send(msg map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		r.t.Fatalf("write to binky mcp: %v", err)
	}
}

// request sends one request and returns its response's result, counting
// the progress notifications that came first.
func (r *rawMCP) request(method string, params map[string]any) (json.RawMessage, int) {
	r.t.Helper()
	r.id++
	r.send(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	progress := 0
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("binky mcp closed stdout before answering %s\nstderr:\n%s", method, r.stderrText())
			}
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				r.t.Fatalf("binky mcp wrote a line that is not JSON-RPC while serving %s (%v): %.200q", method, err, line)
			}
			if m.Method == "notifications/progress" {
				progress++
			}
			if m.ID != nil && *m.ID == r.id && m.Method == "" {
				if len(m.Error) > 0 {
					r.t.Fatalf("%s: protocol error %s", method, m.Error)
				}
				return m.Result, progress
			}
		case <-timeout:
			r.t.Fatalf("no answer to %s\nstderr:\n%s", method, r.stderrText())
		}
	}
}

func (r *rawMCP) stderrText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stderr.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// wait waits for the server to exit and for its stdout to close.
func (r *rawMCP) wait(why string) {
	r.t.Helper()
	exited := make(chan error, 1)
	go func() {
		<-r.done
		exited <- r.cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			r.t.Errorf("binky mcp after %s: %v; want exit 0\nstderr:\n%s", why, err, r.stderrText())
		}
	case <-time.After(20 * time.Second):
		r.t.Fatalf("binky mcp still runs 20s after %s", why)
	}
}

// checkProtocolLines wants every line written to stdout to be one JSON-RPC
// 2.0 message.
func (r *rawMCP) checkProtocolLines() int {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, line := range r.all {
		var m map[string]json.RawMessage
		if !strings.HasSuffix(line, "\n") {
			r.t.Errorf("stdout line %d is not newline-terminated: %.200q", i+1, line)
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			r.t.Errorf("stdout line %d is not JSON (%v): %.200q", i+1, err, line)
			continue
		}
		_, hasID := m["id"]
		_, hasMethod := m["method"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if string(m["jsonrpc"]) != `"2.0"` || !(hasMethod || hasID && (hasResult || hasError)) {
			r.t.Errorf("stdout line %d is not a JSON-RPC 2.0 message: %.200q", i+1, line)
		}
	}
	return len(r.all)
}

// TestMCPStdoutIsProtocolOnlyUnderFlood has a verify command flood its own
// output (5 MB on stdout, 1 MB on stderr) and wants every line `binky mcp`
// writes to be JSON-RPC, with the failure readable as a tool error.
func TestMCPStdoutIsProtocolOnlyUnderFlood(t *testing.T) {
	start := time.Now()
	e := newEnv(t, `
[project]
name = "flood"
port_range = PORTRANGE

[services.worker]
cmd = "echo worker stdout noise; exec sleep 600"

[agents]
verify = ["yes binky | head -c 5000000", "yes noise | head -c 1000000 >&2; exit 1"]
`)
	r := e.startRawMCP()
	res, _ := r.request("tools/call", map[string]any{"name": "up", "arguments": map[string]any{"branch": "flood"}, "_meta": map[string]any{"progressToken": "up"}})
	var up struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(res, &up)
	if up.IsError {
		t.Fatalf("up: %s\nstderr:\n%s", res, r.stderrText())
	}
	res, progress := r.request("tools/call", map[string]any{"name": "verify", "arguments": map[string]any{"worktree": "flood"}, "_meta": map[string]any{"progressToken": 42}})
	var v struct {
		IsError    bool      `json:"isError"`
		Structured mcpVerify `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		t.Fatal(err)
	}
	if !v.IsError || len(v.Structured.Checks) != 2 || !v.Structured.Checks[0].Passed || v.Structured.Checks[1].Passed {
		t.Errorf("flood verify: got isError=%v %+v; want a tool error, check 1 passed, check 2 failed", v.IsError, v.Structured)
	} else {
		tail := v.Structured.Checks[0].OutputTail
		if !v.Structured.Checks[0].Truncated || !strings.HasPrefix(tail, "binky\n") || len(tail) > 8<<10 {
			t.Errorf("flood output tail: truncated=%v, %d bytes starting %.20q; want a short whole-line tail", v.Structured.Checks[0].Truncated, len(tail), tail)
		}
		if !strings.Contains(v.Structured.Checks[1].OutputTail, "noise") {
			t.Errorf("stderr flood tail %.40q; want noise", v.Structured.Checks[1].OutputTail)
		}
	}
	if progress < 2 || progress > 200 {
		t.Errorf("verify sent %d progress notifications; want at least one per check and no flood", progress)
	}
	r.stdin.Close()
	r.wait("stdin EOF")
	n := r.checkProtocolLines()
	t.Logf("%d stdout lines, all JSON-RPC; verify flood round trip took %v", n, time.Since(start).Round(time.Millisecond))
}

// TestMCPFailedHealthCheckAndSIGTERM wants a failed health check during up
// to come back as a tool error naming the service and the cause, and the
// server to stop cleanly on SIGTERM.
func TestMCPFailedHealthCheckAndSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM is Unix-only")
	}
	e := newEnv(t, `
[project]
name = "sickmcp"
port_range = PORTRANGE

[services.api]
cmd = "echo cannot open config file; exec sleep 600"
ports = ["http"]
health = { http = "http://127.0.0.1:${self.port}/healthz", timeout = "2s", interval = "100ms" }
`)
	r := e.startRawMCP()
	res, _ := r.request("tools/call", map[string]any{"name": "up", "arguments": map[string]any{"branch": "sick"}})
	var up struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured mcpError `json:"structuredContent"`
	}
	json.Unmarshal(res, &up)
	if !up.IsError || up.Structured.Error.Code != "failed" || len(up.Content) == 0 {
		t.Fatalf("up with a failing health check: %s; want isError with code failed", res)
	}
	for _, want := range []string{"api", "/healthz", "cannot open config file"} {
		if !strings.Contains(up.Structured.Error.Message, want) {
			t.Errorf("up error does not mention %q: %s", want, up.Structured.Error.Message)
		}
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.wait("SIGTERM")
	r.checkProtocolLines()
}
