package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentsConfig is a world with one process and a check, for the worktrees
// agent tools make (docs/agents.md).
const agentsConfig = `
[project]
name = "agents"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["http"]

[agents]
expose = ["web"]
verify = ["test -f binky.toml"]
`

// worktreeCount is how many worktrees git lists for e's repository.
func (e *env) worktreeCount() int {
	return strings.Count(e.git("worktree", "list", "--porcelain"), "\nworktree ") + 1
}

// TestWorktreeMadeByClaudeCode: a worktree Claude Code made (a plain git
// worktree add under .claude/worktrees/x) gets its world in place; every
// verb finds it from the cwd; remove keeps the worktree unless --worktree.
func TestWorktreeMadeByClaudeCode(t *testing.T) {
	e := newEnv(t, agentsConfig)
	os.WriteFile(filepath.Join(e.repo, ".gitignore"), []byte(".claude/worktrees/\n"), 0o644)
	e.git("add", ".gitignore")
	e.git("commit", "-q", "-m", "ignore agent worktrees")
	x := filepath.Join(e.repo, ".claude", "worktrees", "x")
	e.git("worktree", "add", "-q", "-b", "worktree-x", x)

	in := func(args ...string) result {
		t.Helper()
		r := e.binkyIn(x, args...)
		if r.code != 0 {
			t.Fatalf("binky %s in %s: exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon log:\n%s", strings.Join(args, " "), x, r.code, r.stdout, r.stderr, e.daemonLog())
		}
		return r
	}
	in("up", "-q")
	w := e.status().world(t, "worktree-x")
	if w.Path != x || w.Branch != "worktree-x" || w.State != "up" {
		t.Fatalf("world of .claude/worktrees/x: path %s, branch %s, state %s; want %s, worktree-x, up", w.Path, w.Branch, w.State, x)
	}
	// The branch named from elsewhere is the same world, never a second worktree.
	if r := e.must("up", "worktree-x"); !strings.Contains(r.stdout, "already up") {
		t.Errorf("up worktree-x from the main worktree: %q; want it already up", r.stdout)
	}
	if n := e.worktreeCount(); n != 2 {
		t.Errorf("git lists %d worktrees after up worktree-x; want 2 (no second worktree of the branch)\n%s", n, e.git("worktree", "list"))
	}
	if r := in("env"); !strings.Contains(r.stdout, "web") {
		t.Errorf("env in the worktree: %q; want the web service", r.stdout)
	}
	in("verify")
	in("down")
	if got := e.status().world(t, "worktree-x").State; got != "down" {
		t.Errorf("after down in the worktree: state %s; want down", got)
	}
	r := in("remove")
	if !strings.Contains(r.stdout, "stays") {
		t.Errorf("remove of a worktree binky did not make: %q; want it to say the worktree stays", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(x, "binky.toml")); err != nil {
		t.Fatalf("remove took away a worktree binky did not make: %v", err)
	}
	if st := e.status(); len(st.Worlds) != 0 {
		t.Fatalf("after remove: worlds %+v; want none", st.Worlds)
	}
	in("up", "-q")
	in("remove", "--worktree")
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Fatalf("remove --worktree left %s (stat: %v)", x, err)
	}
	if n := e.worktreeCount(); n != 1 {
		t.Errorf("git lists %d worktrees after remove --worktree; want 1", n)
	}
}

// TestWorktreesMadeElsewhere: a worktrunk-style sibling directory and a
// detached HEAD; a detached HEAD's world is named after its directory,
// the same on every up; a worktree binky made still goes with its world.
func TestWorktreesMadeElsewhere(t *testing.T) {
	e := newEnv(t, agentsConfig)
	sib := e.repo + ".feat-y"
	e.git("worktree", "add", "-q", "-b", "feat/y", sib)
	det := filepath.Join(filepath.Dir(e.repo), "scratch")
	e.git("worktree", "add", "-q", "--detach", det, "HEAD")
	t.Cleanup(func() { os.RemoveAll(sib); os.RemoveAll(det) })

	for _, dir := range []string{sib, det, det} {
		if r := e.binkyIn(dir, "up", "-q"); r.code != 0 {
			t.Fatalf("up in %s: exit %d\n%s%s\ndaemon log:\n%s", dir, r.code, r.stdout, r.stderr, e.daemonLog())
		}
	}
	st := e.status()
	if len(st.Worlds) != 2 {
		t.Fatalf("worlds %+v; want 2 (the sibling's and the detached HEAD's, once)", st.Worlds)
	}
	if w := st.world(t, "scratch"); w.Path != det || w.Branch != "" {
		t.Errorf("detached world: path %s branch %q; want %s and no branch", w.Path, w.Branch, det)
	}
	for _, w := range st.Worlds {
		if w.Worktree != "scratch" && w.Path != sib {
			t.Errorf("world %s at %s; want the sibling %s", w.Worktree, w.Path, sib)
		}
	}
	if r := e.binkyIn(det, "remove"); r.code != 0 {
		t.Fatalf("remove in the detached worktree: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(det); err != nil {
		t.Errorf("remove took away the detached worktree binky did not make: %v", err)
	}

	// A worktree binky made goes with its world, as before.
	e.must("up", "-q", "feat/z")
	made := ""
	for _, w := range e.status().Worlds {
		if w.Branch == "feat/z" {
			made = w.Path
		}
	}
	if made == "" {
		t.Fatalf("no world of feat/z in status")
	}
	e.must("remove", "feat/z")
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("remove of binky's own worktree left %s (stat: %v)", made, err)
	}
}
