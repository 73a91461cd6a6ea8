package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
)

// huge is a 10 MB argument: ten distinct bytes over and over, so that
// any run of more than echoBytes of it in a reply is found (echoed).
var huge = strings.Repeat("abcdefghij", 1<<20)

// echoed reports whether text holds more than echoBytes bytes of arg in a
// row: arg is periodic with period 10, so every window of it is one of the
// first ten.
func echoed(text, arg string) bool {
	for o := 0; o < 10 && o+echoBytes+1 <= len(arg); o++ {
		if strings.Contains(text, arg[o:o+echoBytes+1]) {
			return true
		}
	}
	return false
}

// TestHugeArgumentsAreRefusedSmall: a 10 MB value for the first tool's
// main argument, 256 KiB for every other tool's (and for every other string
// argument of every tool, 64 KiB: past every bound, the same path, without
// decoding 10 MB thirty times; 10 MB for each tool took 100 s on a busy
// machine),
// a 1 MB unknown argument name and a 1 MB number are refused before the
// daemon is called, with a small reply that names the argument and its
// size and repeats no more than echoBytes of it.
func TestHugeArgumentsAreRefusedSmall(t *testing.T) {
	d := &fakeDaemon{}
	s := startSession(t, d)
	defer s.close()

	type call struct {
		tool, arg string
		args      map[string]any
		want      string
	}
	main := map[string]string{ToolUp: "branch"}
	var calls []call
	whole := false // the full 10 MB goes once: each later main argument is 256 KiB
	for _, tool := range tools() {
		props := tool.InputSchema.Properties
		for _, name := range sortedKeysAny(props) {
			if name == "lines" {
				continue
			}
			v := huge[:64<<10]
			if name == cmp.Or(main[tool.Name], "worktree") {
				v = huge[:256<<10]
				if !whole {
					v, whole = huge, true
				}
			}
			args := map[string]any{name: v}
			if name != "worktree" && tool.Name != ToolUp && tool.Name != ToolStatus && tool.Name != ToolLogs {
				args["worktree"] = "a" // needWorktree must not be what refuses it
			}
			calls = append(calls, call{tool.Name, name, args, fmt.Sprintf("%q is %d bytes", name, len(v))})
		}
	}
	calls = append(calls,
		call{ToolEnv, "unknown name", map[string]any{huge[:1<<20]: "x"}, fmt.Sprintf("(%d bytes)", 1<<20)},
		call{ToolLogs, "a huge number", map[string]any{"lines": json.Number("1" + strings.Repeat("0", 1<<20))}, ""},
	)
	for _, c := range calls {
		m, _ := s.request("tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if len(m.Result) > 2<<10 {
			t.Errorf("%s with an oversized %s: reply is %d bytes; want under 2 KiB", c.tool, c.arg, len(m.Result))
		}
		if echoed(string(m.Result), huge) {
			t.Errorf("%s with an oversized %s: the reply repeats more than %d bytes of it", c.tool, c.arg, echoBytes)
		}
		if c.arg == "a huge number" {
			// The protocol library cannot decode it: a protocol error.
			if len(m.Error) == 0 || len(m.Error) > 1<<10 {
				t.Errorf("%s with a 1 MB number: got %.300s %.300s; want a short protocol error", c.tool, m.Result, m.Error)
			}
			continue
		}
		if len(m.Error) > 1<<10 || echoed(string(m.Error), huge) {
			t.Errorf("%s with an oversized %s: protocol error is %d bytes, repeating the argument", c.tool, c.arg, len(m.Error))
		}
		var r toolResult
		if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) != 2 {
			t.Errorf("%s with an oversized %s: want a tool result; got %s %s", c.tool, c.arg, m.Result, m.Error)
			continue
		}
		var e ErrorResult
		json.Unmarshal(r.Structured, &e)
		if !r.IsError || e.Error.Code != "invalid" || !strings.Contains(r.Content[0].Text, c.want) {
			t.Errorf("%s with an oversized %s: got isError=%v code=%q %q; want invalid, naming %q", c.tool, c.arg, r.IsError, e.Error.Code, r.Content[0].Text, c.want)
		}
	}
	if len(d.calls) != 0 {
		t.Errorf("the daemon was called (%v); want every oversized call refused before", d.calls)
	}
}

// TestHugeNamesInProtocolErrors: a 1 MB tool or method name is a protocol
// error whose message repeats no more than echoBytes of it.
func TestHugeNamesInProtocolErrors(t *testing.T) {
	s := startSession(t, &fakeDaemon{})
	defer s.close()
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"tools/call", map[string]any{"name": huge[:1<<20], "arguments": map[string]any{}}},
		{huge[:1<<20], map[string]any{}},
	} {
		m, _ := s.request(tc.method, tc.params)
		raw, _ := json.Marshal(m)
		if len(m.Error) == 0 {
			t.Errorf("want a protocol error; got %.300s", raw)
		}
		if len(raw) > 2<<10 || echoed(string(raw), huge) {
			t.Errorf("protocol error is %d bytes (%.300s…); want under 2 KiB, repeating at most %d bytes of the name", len(raw), raw, echoBytes)
		}
	}
	m, _ := s.request("tools/call", map[string]any{"name": huge[:1<<20], "arguments": map[string]any{}})
	if !strings.Contains(string(m.Error), "binky's tools are up, down") || !strings.Contains(string(m.Error), fmt.Sprint(1<<20)) {
		t.Errorf("unknown long tool name: got %s; want the size and the tools named", m.Error)
	}
}

// TestLongArgumentsAreEchoedBounded: arguments under their bound but
// longer than echoBytes come back (in the daemon's messages, in results,
// summaries and progress) as their first echoBytes bytes and their size.
func TestLongArgumentsAreEchoedBounded(t *testing.T) {
	name := strings.Repeat("feat-login", 90)                       // 900 bytes
	repo := "sub/" + strings.Repeat("deep-dir/", 330)              // ~3 KB
	grep := "(" + strings.Repeat("ERROR|", 150)                    // 901 bytes, unbalanced
	goodGrep := "(" + strings.Repeat("abcdefghij|", 80) + "panic)" // 887 bytes
	home := t.TempDir()
	world := api.World{Project: "demo", Worktree: "feat-a", Branch: name, State: "up",
		Services: []api.Service{{Name: "api", Kind: "cmd", State: "running"}}}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpEnv: func(args any, _ api.Handlers, _ any) error {
			a := args.(api.EnvArgs)
			return &api.Error{Code: api.CodeNotFound, Message: fmt.Sprintf("no world named %q here, nor %s, in %s", a.Name, a.Name, a.Dir)}
		},
		api.OpUp: func(args any, h api.Handlers, out any) error {
			a := args.(api.UpArgs)
			h.Progress(api.Progress{Step: "worktree", Message: a.Branch})
			return &api.Error{Code: api.CodeInvalid, Message: fmt.Sprintf("no binky.toml in %s for branch %s", a.Dir, a.Branch)}
		},
		api.OpVerify: func(_ any, _ api.Handlers, out any) error {
			return setResult(api.Verify{Passed: true, Commit: "0123456789"}, out)
		},
		api.OpStatus: func(_ any, _ api.Handlers, out any) error {
			return setResult(api.StatusResult{Worlds: []api.World{world}}, out)
		},
	}}
	s := startSessionIn(t, d, home)
	defer s.close()

	check := func(what string, r toolResult, notes []message, args ...string) {
		t.Helper()
		all := r.Content[0].Text + r.Content[1].Text + string(r.Structured)
		for _, n := range notes {
			all += string(n.Params)
		}
		for _, a := range args {
			for o := 0; o+echoBytes+1 <= len(a); o += 37 {
				if strings.Contains(all, a[o:o+echoBytes+1]) {
					t.Errorf("%s: the reply repeats %d bytes of a %d-byte argument (at %d): %.400s", what, echoBytes+1, len(a), o, all)
					return
				}
			}
		}
	}
	r, _ := s.call(ToolEnv, map[string]any{"worktree": name, "repo": repo}, nil)
	check("env", r, nil, name, repo)
	if !r.IsError || !strings.Contains(r.Content[0].Text, fmt.Sprintf("… (%d bytes)", len(name))) {
		t.Errorf("env: got %q; want the name cut, with its size", r.Content[0].Text)
	}
	r, notes := s.call(ToolUp, map[string]any{"branch": name, "repo": repo}, "tok")
	check("up", r, notes, name, repo)
	if len(notes) != 1 {
		t.Errorf("up: got %d progress notifications; want 1", len(notes))
	}
	r, _ = s.call(ToolVerify, map[string]any{"worktree": name}, nil)
	check("verify", r, nil, name)
	var v VerifyResult
	json.Unmarshal(r.Structured, &v)
	if r.IsError || !strings.HasSuffix(v.Worktree, fmt.Sprintf("… (%d bytes)", len(name))) {
		t.Errorf("verify: got isError=%v worktree %q; want the name cut", r.IsError, v.Worktree)
	}
	r, _ = s.call(ToolLogs, map[string]any{"worktree": "feat-a", "grep": grep}, nil)
	check("logs bad grep", r, nil, grep)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "missing closing )") {
		t.Errorf("logs with a bad grep: got %q; want the regexp error", r.Content[0].Text)
	}
	r, _ = s.call(ToolLogs, map[string]any{"worktree": "feat-a", "service": name}, nil)
	check("logs unknown service", r, nil, name)
	r, _ = s.call(ToolLogs, map[string]any{"worktree": "feat-a", "grep": goodGrep}, nil)
	check("logs grep", r, nil, goodGrep)
	if r.IsError || !strings.Contains(r.Content[0].Text, "log lines matching") {
		t.Errorf("logs grep: got isError=%v %q", r.IsError, r.Content[0].Text)
	}
}

// TestRepliesAreBounded: whatever the daemon or a log holds, a result's
// summary and JSON stay within their bounds, say when they were cut, and
// the JSON text and structuredContent stay the same value.
func TestRepliesAreBounded(t *testing.T) {
	home := t.TempDir()
	var worlds []api.World
	for i := range 3000 {
		worlds = append(worlds, api.World{Project: "demo", Worktree: fmt.Sprintf("wt-%04d", i), State: "failed",
			Services: []api.Service{{Name: "api", State: "failed", Error: strings.Repeat("boom ", 200)}}})
	}
	logWorld := api.World{Project: "demo", Worktree: "noisy", State: "up", Services: []api.Service{{Name: "api"}, {Name: "db"}}}
	var checks []api.Check
	for i := range 200 {
		checks = append(checks, api.Check{Cmd: fmt.Sprintf("check %d", i), ExitCode: 1})
	}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpStatus: func(args any, _ api.Handlers, out any) error {
			if args.(api.StatusArgs).Name == "noisy" {
				return setResult(api.StatusResult{Worlds: []api.World{logWorld}}, out)
			}
			return setResult(api.StatusResult{Worlds: worlds}, out)
		},
		api.OpVerify: func(_ any, h api.Handlers, out any) error {
			for i := range checks {
				h.Output(api.Output{Check: i, Data: strings.Repeat("\x1b[31mred\x1b[0m\n", 400) + fmt.Sprintf("last line of %d\n", i)})
			}
			b, _ := json.Marshal(api.Verify{Commit: "0123456789", Checks: checks})
			return &api.Error{Code: api.CodeFailed, Message: "verify failed: " + strings.Repeat("x", 1<<20), Detail: b}
		},
	}}
	// Each service's log: 500 lines of control characters, each escaped
	// six times its size in JSON.
	dir := filepath.Join(home, "logs", "demo", "noisy")
	os.MkdirAll(dir, 0o700)
	noise := strings.Repeat(strings.Repeat("\x01", 300)+"\n", 500)
	for _, svc := range []string{"api", "db"} {
		if err := os.WriteFile(filepath.Join(dir, svc+".log"), []byte(noise), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startSessionIn(t, d, home)
	defer s.close()

	bounded := func(what string, r toolResult) map[string]json.RawMessage {
		t.Helper()
		if n := len(r.Content[0].Text); n > maxSummaryBytes || !utf8.ValidString(r.Content[0].Text) {
			t.Errorf("%s: summary is %d bytes; want at most %d, valid UTF-8", what, n, maxSummaryBytes)
		}
		if n := len(r.Content[1].Text); n > maxResultJSON {
			t.Errorf("%s: JSON is %d bytes; want at most %d", what, n, maxResultJSON)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.Structured, &m); err != nil {
			t.Fatalf("%s: structured content is not an object: %v", what, err)
		}
		return m
	}
	r, _ := s.call(ToolStatus, nil, nil)
	m := bounded("status", r)
	var tr Truncation
	if err := json.Unmarshal(m["reply_truncated"], &tr); err != nil || tr.Bytes <= maxResultJSON || tr.Limit != maxResultJSON {
		t.Errorf("status of 3000 worlds: reply_truncated %s; want the size and the limit", m["reply_truncated"])
	}
	if !strings.Contains(r.Content[0].Text, "summary cut") {
		t.Errorf("status summary does not say it was cut: …%s", r.Content[0].Text[max(0, len(r.Content[0].Text)-100):])
	}

	r, _ = s.call(ToolVerify, map[string]any{"worktree": "a"}, nil)
	bounded("verify", r)
	var v VerifyResult
	json.Unmarshal(r.Structured, &v)
	if len(v.Checks) != len(checks) {
		t.Fatalf("verify: %d checks in the result; want %d", len(v.Checks), len(checks))
	}
	for i, c := range v.Checks {
		if !c.Truncated || !strings.HasSuffix(c.OutputTail, fmt.Sprintf("last line of %d\n", i)) {
			t.Errorf("verify check %d: output tail %q (truncated %v); want the end of its output", i, c.OutputTail, c.Truncated)
			break
		}
	}

	r, _ = s.call(ToolLogs, map[string]any{"worktree": "noisy", "lines": 500}, nil)
	m = bounded("logs", r)
	var lr LogsResult
	json.Unmarshal(r.Structured, &lr)
	if len(lr.Services) != 2 || !lr.Services[0].Truncated || len(lr.Services[0].Lines) == 0 {
		t.Fatalf("logs: got %d services, first truncated=%v with %d lines", len(lr.Services), lr.Services[0].Truncated, len(lr.Services[0].Lines))
	}
	if n := len(r.Content[1].Text); n > maxLogBytes+1<<10 {
		t.Errorf("logs: JSON is %d bytes; want the lines within %d bytes of JSON", n, maxLogBytes)
	}
	if _, cut := m["reply_truncated"]; cut {
		t.Errorf("logs: the reply was cut as a whole; want the lines bounded by the logs budget")
	}
}

func TestBindBounds(t *testing.T) {
	a, err := bind(callRequest("env", `{"worktree":"a","project":"p"}`), "worktree", "project")
	if err != nil || a.Project != "p" || a.Worktree != "a" {
		t.Errorf("bind project: got %+v, %v; want project p", a, err)
	}
	long := strings.Repeat("x", maxNameArg+1)
	_, err = bind(callRequest("env", `{"worktree":"`+long+`"}`), "worktree")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`"worktree" is %d bytes; it takes at most %d`, len(long), maxNameArg)) {
		t.Errorf("bind a long worktree: got %v", err)
	}
	repo := strings.Repeat("d/", maxNameArg) // over the name bound, under repo's
	if _, err := bind(callRequest("up", `{"repo":"`+repo+`"}`), "repo"); err != nil {
		t.Errorf("bind a %d-byte repo: %v; want it taken", len(repo), err)
	}
}

func TestElideAndShrink(t *testing.T) {
	if got := elide("short"); got != "short" {
		t.Errorf("elide(short) = %q", got)
	}
	s := strings.Repeat("é", 300) // 600 bytes: a cut at 200 falls on a character boundary
	got := elide(s)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "… (600 bytes)") || len(got) > echoBytes+20 {
		t.Errorf("elide: got %q", got)
	}
	if q := quoteArg("a\"b" + strings.Repeat("z", 300)); !strings.HasPrefix(q, `"a\"b`) || !strings.HasSuffix(q, "… (303 bytes)") {
		t.Errorf("quoteArg: got %q", q)
	}
	big := map[string]any{"items": make([]string, 100000), "note": strings.Repeat("n", 1<<20)}
	for i := range big["items"].([]string) {
		big["items"].([]string)[i] = fmt.Sprint(i)
	}
	r := result("sum", big, false)
	b := []byte(r.Content[1].(mcpgo.TextContent).Text)
	if len(b) > maxResultJSON || !json.Valid(b) || !strings.Contains(string(b), `"arrays_cut_to"`) {
		t.Errorf("shrink: got %d bytes, valid %v: %.200s", len(b), json.Valid(b), b)
	}
}

func TestBoundProtocolError(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"tool '` + strings.Repeat("q", 5000) + `' not found"}}` + "\n")
	out := boundProtocolError(line)
	var m struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &m); err != nil || m.ID != 3 || m.Error.Code != -32602 || len(out) > 400 || out[len(out)-1] != '\n' {
		t.Errorf("bound: got %s (%v)", out, err)
	}
	ok := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("r", 5000) + `"}]}}` + "\n")
	if got := boundProtocolError(ok); string(got) != string(ok) {
		t.Errorf("a result line was rewritten")
	}
}
