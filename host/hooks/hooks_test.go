package hooks

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestParseClaudeCreate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the recorded payloads carry Unix paths (Claude Code on Linux and macOS), which are not absolute on Windows; no Windows payload is recorded yet")
	}
	f, err := os.Open("testdata/claude-worktree-create.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseClaudeCreate(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Path("/home/dev/shop"), "/home/dev/shop/.claude/worktrees/bright-running-fox"; got != want {
		t.Errorf("Path = %s; want %s", got, want)
	}
	if got := c.Branch(); got != "worktree-bright-running-fox" {
		t.Errorf("Branch = %s; want worktree-bright-running-fox", got)
	}
	if c.Base() != "" {
		t.Errorf("Base = %q; want HEAD (empty)", c.Base())
	}
	for _, tt := range []struct {
		payload, path, base, err string
	}{
		{payload: `{"hook_event_name":"WorktreeCreate","worktree_name":"feat-auth","base_path":"/p/.worktrees","source_ref":"main"}`, path: "/p/.worktrees/feat-auth", base: "main"},
		{payload: `{"worktree_path":"/elsewhere/wt1","base_ref":"dev"}`, path: "/elsewhere/wt1", base: "dev"},
		{payload: `{"name":"x","base_commit":"abc123"}`, path: "/proj/.claude/worktrees/x", base: "abc123"},
		{payload: `{"name":"../escape"}`, err: "plain directory name"},
		{payload: `{"name":"-rf"}`, err: "plain directory name"},
		{payload: `{"name":""}`, err: "names no worktree"},
		{payload: `{"hook_event_name":"WorktreeRemove","name":"x"}`, err: "answers WorktreeCreate"},
		{payload: `{"worktree_path":"rel/x"}`, err: "not absolute"},
		{payload: `[1]`, err: "not the JSON object"},
		{payload: ``, err: "no WorktreeCreate payload"},
	} {
		c, err := ParseClaudeCreate(strings.NewReader(tt.payload))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseClaudeCreate(%s) error %v; want one saying %q", tt.payload, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseClaudeCreate(%s): %v", tt.payload, err)
			continue
		}
		if got := c.Path("/proj"); got != tt.path {
			t.Errorf("ParseClaudeCreate(%s).Path = %s; want %s", tt.payload, got, tt.path)
		}
		if got := c.Base(); got != tt.base {
			t.Errorf("ParseClaudeCreate(%s).Base = %s; want %s", tt.payload, got, tt.base)
		}
	}
	big := `{"name":"x","pad":"` + strings.Repeat("a", MaxPayload) + `"}`
	if _, err := ParseClaudeCreate(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("an oversized payload: %v; want refused", err)
	}
}

func TestParseClaudeRemove(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the recorded payloads carry Unix paths (Claude Code on Linux and macOS), which are not absolute on Windows; no Windows payload is recorded yet")
	}
	f, err := os.Open("testdata/claude-worktree-remove.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseClaudeRemove(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.WorktreePath != "/home/dev/shop/.claude/worktrees/bright-running-fox" {
		t.Errorf("WorktreePath = %s", c.WorktreePath)
	}
	for _, p := range []string{`{}`, `{"worktree_path":"x"}`, `{"hook_event_name":"WorktreeCreate","worktree_path":"/x"}`} {
		if _, err := ParseClaudeRemove(strings.NewReader(p)); err == nil {
			t.Errorf("ParseClaudeRemove(%s) accepted it", p)
		}
	}
}

func FuzzClaudePayload(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("the recorded payloads carry Unix paths (Claude Code on Linux and macOS), which are not absolute on Windows; no Windows payload is recorded yet")
	}
	for _, p := range []string{"testdata/claude-worktree-create.json", "testdata/claude-worktree-remove.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"worktree_name":"a","base_path":"/b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := ParseClaudeCreate(strings.NewReader(string(b))); err == nil {
			p := c.Path("/proj")
			if !filepath.IsAbs(p) {
				t.Fatalf("Path %q is not absolute", p)
			}
			if c.WorktreePath == "" && filepath.Base(p) != c.Name {
				t.Fatalf("Path %q does not end in the name %q", p, c.Name)
			}
			if strings.ContainsAny(c.Name, "/\\\x00") || c.Name == ".." || strings.HasPrefix(c.Name, "-") {
				t.Fatalf("accepted name %q", c.Name)
			}
		}
		if c, err := ParseClaudeRemove(strings.NewReader(string(b))); err == nil && !filepath.IsAbs(c.WorktreePath) {
			t.Fatalf("accepted relative worktree_path %q", c.WorktreePath)
		}
	})
}

func TestMergeClaudeSettings(t *testing.T) {
	in := []byte(`{
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "gofmt -w ."}]}]
  },
  "model": "opus"
}`)
	out, changed, err := MergeClaudeSettings(in, ClaudeCreateCmd, ClaudeRemoveCmd)
	if err != nil || !changed {
		t.Fatalf("merge: changed %v, %v", changed, err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("merged file is not JSON: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{`"Bash(go test:*)"`, `"gofmt -w ."`, `"opus"`, `"binky hook claude create"`, `"binky hook claude remove"`, `"WorktreeCreate"`, `"WorktreeRemove"`} {
		if !strings.Contains(s, want) {
			t.Errorf("merged file lacks %s:\n%s", want, s)
		}
	}
	if strings.Index(s, `"permissions"`) > strings.Index(s, `"model"`) {
		t.Errorf("merge reordered the keys:\n%s", s)
	}
	again, changed, err := MergeClaudeSettings(out, ClaudeCreateCmd, ClaudeRemoveCmd)
	if err != nil || changed || string(again) != string(out) {
		t.Errorf("a second merge changed %v (%v)", changed, err)
	}
	fresh, changed, err := MergeClaudeSettings(nil, ClaudeCreateCmd, ClaudeRemoveCmd)
	if err != nil || !changed {
		t.Fatalf("merge into nothing: %v %v", changed, err)
	}
	var hooks struct {
		Hooks map[string][]hookGroup `json:"hooks"`
	}
	if err := json.Unmarshal(fresh, &hooks); err != nil || hooks.Hooks["WorktreeCreate"][0].Hooks[0].Command != ClaudeCreateCmd {
		t.Errorf("new settings: %s (%v)", fresh, err)
	}
	other := []byte(`{"hooks":{"WorktreeCreate":[{"hooks":[{"type":"command","command":"./mk-worktree.sh"}]}]}}`)
	if _, _, err := MergeClaudeSettings(other, ClaudeCreateCmd, ClaudeRemoveCmd); !errors.Is(err, ErrOtherHook) {
		t.Errorf("merge over another WorktreeCreate hook: %v; want ErrOtherHook", err)
	}
	for _, bad := range []string{`[]`, `{"hooks": 3}`, `{"hooks":{"WorktreeCreate":{}}}`, `{`} {
		if _, _, err := MergeClaudeSettings([]byte(bad), ClaudeCreateCmd, ClaudeRemoveCmd); err == nil {
			t.Errorf("merge into %s succeeded", bad)
		}
	}
}

func FuzzMergeClaudeSettings(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changed, err := MergeClaudeSettings(b, ClaudeCreateCmd, ClaudeRemoveCmd)
		if err != nil || !changed {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("merge of %q gave invalid JSON %q", b, out)
		}
		if _, again, err := MergeClaudeSettings(out, ClaudeCreateCmd, ClaudeRemoveCmd); err != nil || again {
			t.Fatalf("second merge of %q: changed %v, %v", out, again, err)
		}
	})
}

func TestMergeWorktrunk(t *testing.T) {
	for _, tt := range []struct {
		name, in, create string
		err              string
	}{
		{name: "new", in: "", create: "pre-start"},
		{name: "other hooks kept", in: "# project hooks\n[pre-start]\ndeps = \"npm ci\" # install\n\n[post-start]\nserver = \"npm run dev\"\n", create: "pre-start"},
		{name: "older name", in: "[post-create]\ndeps = \"npm ci\"", create: "post-create"},
		{name: "one string", in: "pre-remove = \"./cleanup.sh\"\n", err: "one command"},
		{name: "not toml", in: "[pre-start", err: "not valid TOML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := MergeWorktrunk([]byte(tt.in), UpCmd, DownCmd)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil || !changed {
				t.Fatalf("changed %v, %v", changed, err)
			}
			if !strings.HasPrefix(string(out), strings.Split(tt.in, "\n")[0]) {
				t.Errorf("the file's first line changed:\n%s", out)
			}
			var doc map[string]map[string]string
			if _, err := toml.Decode(string(out), &doc); err != nil {
				t.Fatalf("merged file: %v\n%s", err, out)
			}
			if doc[tt.create]["binky"] != UpCmd || doc["pre-remove"]["binky"] != DownCmd {
				t.Errorf("merged hooks %v; want binky in %s and pre-remove\n%s", doc, tt.create, out)
			}
			var orig map[string]map[string]string
			toml.Decode(tt.in, &orig)
			for table, cmds := range orig {
				for k, v := range cmds {
					if doc[table][k] != v {
						t.Errorf("%s.%s = %q after the merge; want %q kept", table, k, doc[table][k], v)
					}
				}
			}
			if strings.Contains(tt.in, "#") && !strings.Contains(string(out), "# install") {
				t.Errorf("a comment was lost:\n%s", out)
			}
			again, changed, err := MergeWorktrunk(out, UpCmd, DownCmd)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("a second merge changed %v (%v)", changed, err)
			}
		})
	}
}

func FuzzMergeWorktrunk(f *testing.F) {
	f.Add([]byte("[pre-start]\na = \"b\"\n"))
	f.Add([]byte("x = 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changed, err := MergeWorktrunk(b, UpCmd, DownCmd)
		if err != nil || !changed {
			return
		}
		var doc map[string]any
		if _, err := toml.Decode(string(out), &doc); err != nil {
			t.Fatalf("merge of %q gave invalid TOML %q: %v", b, out, err)
		}
		if _, again, err := MergeWorktrunk(out, UpCmd, DownCmd); err != nil || again {
			t.Fatalf("second merge of %q: changed %v, %v", out, again, err)
		}
	})
}
