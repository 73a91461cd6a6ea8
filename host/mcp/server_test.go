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

// fakeDaemon answers calls the way the daemon does, from a table of ops.
type fakeDaemon struct {
	calls []string
	ops   map[string]func(args any, h api.Handlers, out any) error
}

func (f *fakeDaemon) Call(ctx context.Context, op string, args any, h api.Handlers, out any) error {
	f.calls = append(f.calls, op)
	fn, ok := f.ops[op]
	if !ok {
		return &api.Error{Code: api.CodeInternal, Message: "unexpected op " + op}
	}
	return fn(args, h, out)
}

// setResult copies v into out through JSON, as the client does.
func setResult(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// session drives Serve over pipes with raw JSON-RPC lines.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
	id    int
}

func startSession(t *testing.T, d *fakeDaemon) *session {
	t.Helper()
	return startSessionIn(t, d, t.TempDir())
}

// startSessionIn is startSession with the server's BINKY_HOME.
func startSessionIn(t *testing.T, d *fakeDaemon, home string) *session {
	t.Helper()
	s := New(Config{Home: home, Dir: t.TempDir(), Version: "test"})
	s.connect = func(context.Context) (caller, error) { return d, nil }
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &session{t: t, in: inW, lines: make(chan string, 1000), done: make(chan error, 1)}
	go func() {
		ss.done <- s.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			ss.lines <- sc.Text()
		}
		close(ss.lines)
	}()
	ss.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "test", "version": "0"},
	})
	ss.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return ss
}

func (s *session) send(msg map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("write to server: %v", err)
	}
}

// message is one JSON-RPC line from the server.
type message struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// request sends a request and returns its response plus the notifications
// that came before it.
func (s *session) request(method string, params map[string]any) (message, []message) {
	s.t.Helper()
	s.id++
	s.send(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	var notes []message
	timeout := time.After(2 * time.Minute) // a hang guard only: a 10 MB request is slow on a busy machine
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("server closed stdout before answering %s", method)
			}
			var m message
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				s.t.Fatalf("stdout line is not JSON: %v\n%q", err, line)
			}
			if m.ID != nil && *m.ID == s.id && m.Method == "" {
				return m, notes
			}
			notes = append(notes, m)
		case <-timeout:
			s.t.Fatalf("no answer to %s", method)
		}
	}
}

// toolResult is the part of a tools/call result the tests read.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

func (s *session) call(tool string, args map[string]any, token any) (toolResult, []message) {
	s.t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if token != nil {
		params["_meta"] = map[string]any{"progressToken": token}
	}
	m, notes := s.request("tools/call", params)
	if len(m.Error) > 0 {
		s.t.Fatalf("tools/call %s: protocol error %s; want a tool result", tool, m.Error)
	}
	var r toolResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		s.t.Fatalf("tools/call %s result: %v\n%s", tool, err, m.Result)
	}
	if len(r.Content) != 2 {
		s.t.Fatalf("tools/call %s: got %d content items; want 2 (summary, JSON)", tool, len(r.Content))
	}
	if strings.Contains(r.Content[0].Text, "\n") {
		s.t.Errorf("tools/call %s: summary has several lines: %q", tool, r.Content[0].Text)
	}
	var a, b any
	if err := json.Unmarshal([]byte(r.Content[1].Text), &a); err != nil {
		s.t.Errorf("tools/call %s: second content is not JSON: %v", tool, err)
	}
	if err := json.Unmarshal(r.Structured, &b); err != nil {
		s.t.Errorf("tools/call %s: structuredContent: %v", tool, err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		s.t.Errorf("tools/call %s: JSON text %v differs from structuredContent %v", tool, a, b)
	}
	return r, notes
}

func (s *session) close() {
	s.t.Helper()
	s.in.Close()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("Serve after stdin EOF: %v; want nil", err)
		}
	case <-time.After(10 * time.Second):
		s.t.Fatal("Serve did not return after stdin EOF")
	}
}

func TestToolsList(t *testing.T) {
	s := startSession(t, &fakeDaemon{})
	defer s.close()
	m, _ := s.request("tools/list", map[string]any{})
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Type                 string                    `json:"type"`
				Properties           map[string]map[string]any `json:"properties"`
				Required             []string                  `json:"required"`
				AdditionalProperties *bool                     `json:"additionalProperties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		props    string
		required string
	}{
		"up":           {"all,branch,except,only,profile,repo", ""},
		"down":         {"project,repo,worktree", ""},
		"status":       {"project,repo,worktree", ""},
		"env":          {"project,repo,worktree", ""},
		"verify":       {"project,repo,worktree", ""},
		"logs":         {"grep,lines,project,repo,service,worktree", ""},
		"browser_logs": {"lines,project,repo,service,since_up,worktree", ""},
		"reset":        {"project,repo,service,worktree", ""},
		"restart":      {"project,repo,service,worktree", ""},
		"stop":         {"project,repo,service,worktree", "service"},
		"start":        {"project,repo,service,worktree", "service"},
		"ports":        {"project,repo,worktree", ""},
		"run":          {"command,project,repo,worktree", "command"},
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("got %d tools; want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		props := sortedKeysAny(tool.InputSchema.Properties)
		if got := strings.Join(props, ","); got != w.props {
			t.Errorf("%s properties: got %s; want %s", tool.Name, got, w.props)
		}
		if got := strings.Join(tool.InputSchema.Required, ","); got != w.required {
			t.Errorf("%s required: got %q; want %q", tool.Name, got, w.required)
		}
		for name, p := range tool.InputSchema.Properties {
			wantType := "string"
			switch name {
			case "lines":
				wantType = "number"
			case "all", "since_up":
				wantType = "boolean"
			}
			if p["type"] != wantType || p["description"] == "" || p["description"] == nil {
				t.Errorf("%s.%s: got %v; want a described string", tool.Name, name, p)
			}
		}
		if ap := tool.InputSchema.AdditionalProperties; ap == nil || *ap {
			t.Errorf("%s: additionalProperties %v; want false", tool.Name, ap)
		}
	}
}

func sortedKeysAny[V any](m map[string]V) []string {
	s := map[string]string{}
	for k := range m {
		s[k] = ""
	}
	return sortedKeys(s)
}

func TestVerifyFailureIsToolError(t *testing.T) {
	flood := strings.Repeat("binky\n", 50000)
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpVerify: func(args any, h api.Handlers, out any) error {
			h.Progress(api.Progress{Step: "verify", Message: "true"})
			h.Output(api.Output{Check: 0, Stream: "stdout", Data: "fine\n"})
			h.Progress(api.Progress{Step: "verify", Message: "make test"})
			for i := 0; i < len(flood); i += 4096 {
				h.Output(api.Output{Check: 1, Stream: "stdout", Data: flood[i:min(i+4096, len(flood))]})
			}
			h.Output(api.Output{Check: 1, Stream: "stderr", Data: "FAIL: TestThing\n"})
			v := api.Verify{Passed: false, Commit: "0123456789abcdef", Checks: []api.Check{
				{Cmd: "true", ExitCode: 0, Passed: true},
				{Cmd: "make test", ExitCode: 2, Passed: false},
			}}
			b, _ := json.Marshal(v)
			return &api.Error{Code: api.CodeFailed, Message: `verify failed: "make test" (exit 2)`, Detail: b}
		},
	}}
	s := startSession(t, d)
	defer s.close()
	r, notes := s.call("verify", map[string]any{"worktree": "feat/a"}, "tok-1")
	if !r.IsError {
		t.Fatalf("failed verify: isError false; want true")
	}
	if !strings.Contains(r.Content[0].Text, `"make test" (exit 2)`) {
		t.Errorf("summary %q; want the failed check named", r.Content[0].Text)
	}
	var v VerifyResult
	if err := json.Unmarshal(r.Structured, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Checks) != 2 || v.Checks[0].OutputTail != "fine\n" || !v.Checks[1].Truncated ||
		!strings.HasSuffix(v.Checks[1].OutputTail, "FAIL: TestThing\n") || len(v.Checks[1].OutputTail) > tailBytes {
		t.Errorf("checks: got %+v; want two with output tails, the second truncated and ending in the failure", v.Checks)
	}
	if v.Commit != "0123456789abcdef" || v.Passed || v.Error == "" {
		t.Errorf("verify result: got %+v", v)
	}
	var progress int
	for _, n := range notes {
		if n.Method != "notifications/progress" {
			continue
		}
		var p struct {
			Token   any    `json:"progressToken"`
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &p)
		if p.Token != "tok-1" {
			t.Errorf("progress token %v; want tok-1", p.Token)
		}
		progress++
	}
	if progress < 2 || progress > 20 {
		t.Errorf("got %d progress notifications; want one per check (2) plus a few throttled output lines", progress)
	}
}

func TestDaemonErrorsAreToolErrors(t *testing.T) {
	notFound := func(any, api.Handlers, any) error {
		return &api.Error{Code: api.CodeNotFound, Message: `no world named "nope"`}
	}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpEnv: notFound, api.OpDown: notFound, api.OpStatus: notFound,
		api.OpUp: func(_ any, h api.Handlers, _ any) error {
			h.Progress(api.Progress{Step: "supervise", Service: "api"})
			return &api.Error{Code: api.CodeFailed, Message: "api did not become healthy: connection refused\nlast log lines…"}
		},
	}}
	s := startSession(t, d)
	defer s.close()
	tests := []struct {
		tool     string
		args     map[string]any
		code     string
		contains string
	}{
		{"env", map[string]any{"worktree": "nope"}, "not_found", "nope"},
		{"down", map[string]any{"worktree": "nope"}, "not_found", "nope"},
		{"status", map[string]any{"worktree": "nope"}, "not_found", "nope"},
		{"up", map[string]any{"branch": "feat/x"}, "failed", "did not become healthy"},
		{"env", map[string]any{"worktree": "a", "colour": "red"}, "invalid", "colour"},
		{"verify", map[string]any{"worktree": 3}, "invalid", "must be a string"},
	}
	for _, tt := range tests {
		r, _ := s.call(tt.tool, tt.args, nil)
		var e ErrorResult
		json.Unmarshal(r.Structured, &e)
		if !r.IsError || e.Error.Code != tt.code || !strings.Contains(r.Content[0].Text, tt.contains) {
			t.Errorf("%s %v: got isError=%v code=%q summary=%q; want isError, code %q, summary containing %q",
				tt.tool, tt.args, r.IsError, e.Error.Code, r.Content[0].Text, tt.code, tt.contains)
		}
	}
}

func TestResultsCarryTheWorld(t *testing.T) {
	world := api.World{Project: "demo", Worktree: "feat-a-1234", Branch: "feat/a", State: "up", Ports: [2]int{21000, 21009},
		Services: []api.Service{{Name: "api", Kind: "cmd", State: "running", URL: "http://api.feat-a-1234.demo.localhost:8080"}}}
	var upArgs api.UpArgs
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpUp: func(args any, h api.Handlers, out any) error {
			upArgs = args.(api.UpArgs)
			h.Progress(api.Progress{Step: "ports"})
			h.Progress(api.Progress{Step: "supervise", Service: "api", Message: "healthy"})
			return setResult(world, out)
		},
		api.OpEnv: func(_ any, _ api.Handlers, out any) error {
			return setResult(api.EnvResult{Project: "demo", Worktree: "feat-a-1234", Env: map[string]string{"api": "http://x"}, Order: []string{"api"}}, out)
		},
		api.OpStatus: func(_ any, _ api.Handlers, out any) error {
			w := world
			w.Verify = &api.Verify{Passed: true, Commit: "abcdef0123456789", At: time.Now()}
			return setResult(api.StatusResult{Worlds: []api.World{w}}, out)
		},
	}}
	s := startSession(t, d)
	defer s.close()

	r, notes := s.call("up", map[string]any{"branch": "feat/a", "repo": "sub", "only": "web,api"}, 7)
	if r.IsError || !strings.Contains(r.Content[0].Text, "demo/feat-a-1234 is up") {
		t.Errorf("up: got isError=%v %q", r.IsError, r.Content[0].Text)
	}
	if upArgs.Branch != "feat/a" || !strings.HasSuffix(upArgs.Dir, "sub") || len(upArgs.Only) != 1 || upArgs.Only[0] != "web,api" {
		t.Errorf("up args: got %+v; want branch feat/a in the repo dir, only web,api", upArgs)
	}
	if len(notes) != 2 {
		t.Errorf("up: got %d notifications; want 2 (one per progress frame)", len(notes))
	}
	var w api.World
	json.Unmarshal(r.Structured, &w)
	if w.Worktree != world.Worktree || len(w.Services) != 1 {
		t.Errorf("up structured: got %+v", w)
	}

	r, _ = s.call("env", map[string]any{"worktree": "feat/a"}, nil)
	var e EnvResult
	json.Unmarshal(r.Structured, &e)
	if r.IsError || e.Env["api"] != "http://x" || e.Variables["BINKY_API_URL"] != "http://x" || len(e.Env) != 1 {
		t.Errorf("env: got isError=%v %+v", r.IsError, e)
	}

	r, _ = s.call("status", nil, nil)
	if r.IsError || !strings.Contains(r.Content[0].Text, "verify passed at abcdef01") {
		t.Errorf("status: got isError=%v %q", r.IsError, r.Content[0].Text)
	}
}

// TestEveryToolForwardsTheCallerEnv: each tool sends the server's
// environment (the agent's) with its call, so the daemon resolves
// ${env.NAME} and starts processes from it, never from its own.
func TestEveryToolForwardsTheCallerEnv(t *testing.T) {
	t.Setenv("BINKY_MCP_TEST_CALLER", "agent-value")
	got := map[string]map[string]string{}
	record := func(op string) func(any, api.Handlers, any) error {
		return func(args any, _ api.Handlers, out any) error {
			switch a := args.(type) {
			case api.UpArgs:
				got[op] = a.Env
			case api.DownArgs:
				got[op] = a.Env
			case api.StatusArgs:
				got[op] = a.Env
			case api.EnvArgs:
				got[op] = a.Env
			case api.VerifyArgs:
				got[op] = a.Env
			case api.ResetArgs:
				got[op] = a.Env
			}
			return setResult(map[string]any{}, out)
		}
	}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{}}
	for _, op := range []string{api.OpUp, api.OpDown, api.OpStatus, api.OpEnv, api.OpVerify, api.OpReset} {
		d.ops[op] = record(op)
	}
	s := startSession(t, d)
	defer s.close()
	s.call(ToolUp, map[string]any{"branch": "a"}, nil)
	for _, tool := range []string{ToolDown, ToolStatus, ToolEnv, ToolVerify, ToolReset} {
		s.call(tool, map[string]any{"worktree": "a"}, nil)
	}
	for _, op := range []string{api.OpUp, api.OpDown, api.OpStatus, api.OpEnv, api.OpVerify, api.OpReset} {
		if v := got[op]["BINKY_MCP_TEST_CALLER"]; v != "agent-value" {
			t.Errorf("%s sent env %d entries, BINKY_MCP_TEST_CALLER=%q; want the server's environment", op, len(got[op]), v)
		}
	}
}
