package e2e

import (
	"strings"
	"testing"
)

const verbsConfig = `
[project]
name = "verbs"
port_range = PORTRANGE

[services.app]
cmd = "exec sleep 600"
`

// Issue 40 item 2: the world name of a branch (feat-c for feat/c, the name
// down, env and remove accept) given to up means that world; it never
// forks a new branch beside it. A new branch of that name needs
// --new-branch.
func TestUpWorldNameNeverForksABranch(t *testing.T) {
	e := newEnv(t, verbsConfig)
	e.must("up", "-q", "feat/c")
	e.must("up", "-q", "feat-c")
	if s := e.status(); len(s.Worlds) != 1 || s.Worlds[0].Worktree != "feat-c" || s.Worlds[0].Branch != "feat/c" {
		t.Errorf("worlds after up feat/c then up feat-c: %+v; want only the world of feat/c", s.Worlds)
	}
	if out := e.git("branch", "--list", "feat-c"); strings.TrimSpace(out) != "" {
		t.Errorf("up feat-c made a branch feat-c: %q", out)
	}
	e.must("up", "-q", "--new-branch", "feat-c")
	if out := e.git("branch", "--list", "feat-c"); strings.TrimSpace(out) == "" {
		t.Errorf("up --new-branch feat-c made no branch feat-c")
	}
	branches := map[string]bool{}
	for _, w := range e.status().Worlds {
		branches[w.Branch] = true
	}
	if !branches["feat/c"] || !branches["feat-c"] || len(branches) != 2 {
		t.Errorf("worlds after up --new-branch feat-c: %v; want the worlds of feat/c and feat-c", branches)
	}
}
