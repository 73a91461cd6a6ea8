package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestCallerEnvForwarded: every tool sends the server's whole environment
// (the agent's) as the caller's, so the daemon never falls back on its own.
func TestCallerEnvForwarded(t *testing.T) {
	env := []string{"GREETING=hi", "EMPTY=", "PG_ADMIN=postgres://u:pw@h/db?x=1"}
	s := New(Config{Dir: t.TempDir(), Environ: func() []string { return env }})
	got := s.callerEnv()
	if len(got) != 3 || got["GREETING"] != "hi" || got["PG_ADMIN"] != "postgres://u:pw@h/db?x=1" {
		t.Errorf("callerEnv = %v; want every entry of %v", got, env)
	}
	if v, ok := got["EMPTY"]; !ok || v != "" {
		t.Errorf("callerEnv lost an empty variable: %v", got)
	}
	if r := s.ref("feat/a", "", ""); r.Env["GREETING"] != "hi" || r.Name != "feat/a" {
		t.Errorf("ref = %+v; want the name and the environment", r)
	}
}

func TestTails(t *testing.T) {
	tests := []struct {
		name      string
		chunks    []string
		want      string
		truncated bool
	}{
		{"short", []string{"a\n", "b\n"}, "a\nb\n", false},
		{"none", nil, "", false},
		{"flood keeps the end on a line", []string{strings.Repeat("line\n", 5000), "last\n"}, "", true},
		{"utf-8 cut", []string{strings.Repeat("é", 5000)}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl tails
			for _, c := range tt.chunks {
				tl.add(0, c)
			}
			got, truncated := tl.get(0, tailBytes)
			if truncated != tt.truncated {
				t.Errorf("truncated: got %v; want %v", truncated, tt.truncated)
			}
			if len(got) > tailBytes {
				t.Errorf("kept %d bytes; want at most %d", len(got), tailBytes)
			}
			if !utf8.ValidString(got) {
				t.Errorf("tail is not valid UTF-8: %.20q", got)
			}
			joined := strings.Join(tt.chunks, "")
			if !strings.HasSuffix(joined, got) {
				t.Errorf("tail %.40q is not the end of the output", got)
			}
			if !tt.truncated && got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
			if tt.truncated && strings.Contains(joined, "\n") && !strings.HasPrefix(got, "line\n") {
				t.Errorf("truncated tail starts mid-line: %.20q", got)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"api did not become healthy:\n  last log lines:\n  boom\n", "api did not become healthy: last log lines: boom"},
		{"  padded \n", "padded"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q): got %q; want %q", tt.in, got, tt.want)
		}
	}
}

func callRequest(name string, raw string) mcpgo.CallToolRequest {
	var req mcpgo.CallToolRequest
	req.Params.Name = name
	if raw != "" {
		req.Params.RawArguments = json.RawMessage(raw)
	}
	return req
}

func TestBind(t *testing.T) {
	tests := []struct {
		raw     string
		want    args
		wantErr string
	}{
		{``, args{}, ""},
		{`null`, args{}, ""},
		{`{}`, args{}, ""},
		{`{"worktree":"feat/a","repo":"/r"}`, args{Worktree: "feat/a", Repo: "/r"}, ""},
		{`{"branch":"x"}`, args{}, `takes no argument "branch"`},
		{`{"worktree":3}`, args{}, "must be a string"},
		{`[1]`, args{}, "must be a JSON object"},
	}
	for _, tt := range tests {
		got, err := bind(callRequest("env", tt.raw), "worktree", "repo")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("bind(%s): got err %v; want one containing %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("bind(%s): got %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

// FuzzBind feeds arbitrary argument payloads (outside input from the MCP
// client) to bind: it must never panic and must only accept strings for the
// tool's own arguments.
func FuzzBind(f *testing.F) {
	for _, s := range []string{`{"worktree":"feat/a"}`, `{"repo":"/tmp","worktree":""}`, `null`, `{"x":1}`, `{"worktree":null}`, `"str"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := bind(callRequest("verify", raw), "worktree", "repo")
		if err != nil {
			return
		}
		if a.Branch != "" {
			t.Errorf("bind accepted branch for a tool that does not take it: %+v", a)
		}
	})
}
