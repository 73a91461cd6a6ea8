package mcp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// TestVerifyWithoutWorktreeNamesTheWorld: verify with no worktree
// argument verifies the world of the worktree the server (or repo) is in,
// and its result names that world — it said "verify passed for  at …"
// (issue 40). With the argument, the result repeats it as given.
func TestVerifyWithoutWorktreeNamesTheWorld(t *testing.T) {
	var verifyDir, statusDir string
	passed := api.Verify{Passed: true, Commit: "0123456789abcdef", Checks: []api.Check{{Cmd: "true", Passed: true}}}
	failed := api.Verify{Passed: false, Commit: "0123456789abcdef", Checks: []api.Check{{Cmd: "false", ExitCode: 1}}}
	verify := passed
	findable := true
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpVerify: func(args any, _ api.Handlers, out any) error {
			verifyDir = args.(api.VerifyArgs).Dir
			if !verify.Passed {
				b, _ := json.Marshal(verify)
				return &api.Error{Code: api.CodeFailed, Message: `verify failed: "false" (exit 1)`, Detail: b}
			}
			return setResult(verify, out)
		},
		api.OpStatus: func(args any, _ api.Handlers, out any) error {
			a := args.(api.StatusArgs)
			statusDir = a.Dir
			if !a.Here || a.Name != "" || !findable {
				return &api.Error{Code: api.CodeNotFound, Message: "no world here"}
			}
			return setResult(api.StatusResult{Worlds: []api.World{{Project: "demo", Worktree: "feat-a-1234", Branch: "feat/a"}}}, out)
		},
	}}
	s := startSession(t, d)
	defer s.close()

	tests := []struct {
		name     string
		args     map[string]any
		verify   api.Verify
		findable bool
		summary  string
		worktree string
	}{
		{"passed, no argument", nil, passed, true, "verify passed for feat-a-1234 at 01234567", "feat-a-1234"},
		{"passed, only repo", map[string]any{"repo": "sub"}, passed, true, "verify passed for feat-a-1234 at", "feat-a-1234"},
		{"failed, no argument", nil, failed, true, "verify failed for feat-a-1234 at", "feat-a-1234"},
		{"named", map[string]any{"worktree": "feat/a"}, passed, true, "verify passed for feat/a at", "feat/a"},
		{"the daemon names none", nil, passed, false, "verify passed for the world of ", "the world of "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verify, findable = tt.verify, tt.findable
			verifyDir, statusDir = "", ""
			r, _ := s.call(ToolVerify, tt.args, nil)
			var v VerifyResult
			if err := json.Unmarshal(r.Structured, &v); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Content[0].Text, tt.summary) {
				t.Errorf("summary %q; want it to contain %q", r.Content[0].Text, tt.summary)
			}
			if !strings.HasPrefix(v.Worktree, tt.worktree) || (tt.findable && v.Worktree != tt.worktree) {
				t.Errorf("worktree %q; want %q", v.Worktree, tt.worktree)
			}
			if tt.args["worktree"] == nil && statusDir != verifyDir {
				t.Errorf("the name was looked up in %q, the world verified in %q; want the same directory", statusDir, verifyDir)
			}
			if repo, ok := tt.args["repo"].(string); ok && filepath.Base(verifyDir) != repo {
				t.Errorf("verified in %q; want the repo argument's directory %q", verifyDir, repo)
			}
		})
	}
}
