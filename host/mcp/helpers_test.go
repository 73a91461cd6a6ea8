package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func TestCallerEnv(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	sub := filepath.Join(repo, "src", "pkg")
	os.MkdirAll(sub, 0o755)
	cfg := `[project]
name = "demo"

[services.worker]
cmd = "echo ${env.GREETING} ${env.MISSING} ${env.TOKEN}"
`
	if err := os.WriteFile(filepath.Join(repo, "binky.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(n string) (string, bool) {
		v, ok := map[string]string{"GREETING": "hi", "TOKEN": "", "SECRET": "never"}[n]
		return v, ok
	}
	tests := []struct {
		name, dir, want string
	}{
		{"repository root", repo, "GREETING=hi,TOKEN="},
		{"subdirectory", sub, "GREETING=hi,TOKEN="},
		{"no config", t.TempDir(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := callerEnv(tt.dir, lookup)
			var kv []string
			for _, k := range sortedKeys(got) {
				kv = append(kv, k+"="+got[k])
			}
			if s := strings.Join(kv, ","); s != tt.want {
				t.Errorf("got %s; want %s", s, tt.want)
			}
		})
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
			got, truncated := tl.get(0)
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
