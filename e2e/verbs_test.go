package e2e

import (
	"encoding/json"
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

// Issue 40 item 6: inside a worktree, restart, stop and start need no
// world name, and a service name alone is a service of the world here.
// binky stop keeps the service stopped: up has nothing to do, status says
// who stopped it; binky start starts it again.
func TestStopStartRestartFromTheWorktree(t *testing.T) {
	e := newEnv(t, verbsConfig+`
[services.side]
cmd = "exec sleep 601"
`)
	e.must("up", "-q", "feat/s")
	wt := e.status().world(t, "feat-s").Path
	in := func(args ...string) result {
		t.Helper()
		r := e.binkyIn(wt, args...)
		if r.code != 0 {
			t.Fatalf("binky %s in the worktree: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}
	pid := e.status().world(t, "feat-s").service(t, "side").Pid
	in("restart", "-q")
	restarted := e.status().world(t, "feat-s").service(t, "side").Pid
	if restarted == pid {
		t.Errorf("binky restart in the worktree left side on pid %d; want every service restarted", pid)
	}
	in("restart", "-q", "app")
	if got := e.status().world(t, "feat-s").service(t, "side").Pid; got != restarted {
		t.Errorf("binky restart app in the worktree restarted side too (pid %d, then %d)", restarted, got)
	}

	in("stop", "-q", "side")
	var st struct {
		Worlds []struct {
			State    string `json:"state"`
			Services []struct {
				Name, State, Reason string
			} `json:"services"`
		} `json:"worlds"`
	}
	if err := json.Unmarshal([]byte(in("status", "--json").stdout), &st); err != nil || len(st.Worlds) != 1 {
		t.Fatalf("status --json: %v %+v", err, st)
	}
	for _, s := range st.Worlds[0].Services {
		if s.Name == "side" && (s.State != "stopped" || s.Reason != "stopped by binky stop") {
			t.Errorf("side after binky stop side: %s %q; want stopped, stopped by binky stop", s.State, s.Reason)
		}
	}
	if st.Worlds[0].State != "up" {
		t.Errorf("world after binky stop side: %s; want up", st.Worlds[0].State)
	}
	if out := in("up").stdout; !strings.Contains(out, "nothing to do") {
		t.Errorf("up after binky stop side:\n%s\nwant nothing to do", out)
	}
	in("start", "-q", "side")
	if s := e.status().world(t, "feat-s").service(t, "side"); s.State != "running" {
		t.Errorf("side after binky start side: %s; want running", s.State)
	}
}
