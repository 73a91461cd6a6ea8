//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 37, items 5 and 6: a hook acts only inside its project, and
// `hook install` writes nothing through a file the repository planted.
// Each test drives the real CLI as the tools do (hookRun: sh -c, the
// payload on stdin, CLAUDE_PROJECT_DIR set).

// confineWorld is the agents project under another name.
func confineWorld(name string) string {
	return strings.Replace(agentsConfig, `name = "agents"`, fmt.Sprintf("name = %q", name), 1)
}

// confineSetup is a project (e.repo, project "agents") and, in the same
// home, another project "other" whose worktree other-wt has a running
// world and an uncommitted file, plus an unrelated repository (no
// binky.toml) with a plain linked worktree.
type confineSetup struct {
	e                         *env
	other, otherWT, otherFile string
	unrelated, unrelatedWT    string
	otherPid                  int
	otherWorktreesBefore      string
}

func newConfineSetup(t *testing.T) *confineSetup {
	t.Helper()
	e := newEnv(t, agentsConfig)
	s := &confineSetup{e: e}
	s.other = e.addRepo("other", confineWorld("other"))
	s.otherWT = filepath.Join(filepath.Dir(e.repo), "other-wt")
	e.gitIn(s.other, "worktree", "add", "-q", "-b", "feat", s.otherWT)
	if r := e.binkyIn(s.otherWT, "up", "-q"); r.code != 0 {
		t.Fatalf("up in the other project's worktree: exit %d\n%s%s\ndaemon log:\n%s", r.code, r.stdout, r.stderr, e.daemonLog())
	}
	s.otherFile = filepath.Join(s.otherWT, "uncommitted.txt")
	os.WriteFile(s.otherFile, []byte("work in progress\n"), 0o644)
	w := e.status().world(t, "feat")
	s.otherPid = w.service(t, "web").Pid
	if w.State != "up" || !alive(s.otherPid) {
		t.Fatalf("the other project's world: %s, web pid %d; want up and running", w.State, s.otherPid)
	}
	s.otherWorktreesBefore = gitOutIn(t, e, s.other, "worktree", "list", "--porcelain")

	s.unrelated = filepath.Join(filepath.Dir(e.repo), "unrelated")
	os.MkdirAll(s.unrelated, 0o755)
	os.WriteFile(filepath.Join(s.unrelated, "README"), []byte("not binky's\n"), 0o644)
	e.gitIn(s.unrelated, "init", "-q", "-b", "main")
	e.gitIn(s.unrelated, "add", "-A")
	e.gitIn(s.unrelated, "commit", "-q", "-m", "init")
	s.unrelatedWT = filepath.Join(filepath.Dir(e.repo), "unrelated-wt")
	e.gitIn(s.unrelated, "worktree", "add", "-q", "-b", "x", s.unrelatedWT)
	return s
}

// gitOutIn is git's stdout in dir.
func gitOutIn(t *testing.T, e *env, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return string(out)
}

// intact fails the test unless the other project's world still runs, its
// worktree keeps the uncommitted file, git still lists its worktrees as
// before, and the unrelated worktree is there.
func (s *confineSetup) intact(t *testing.T, after string) {
	t.Helper()
	w := s.e.status().world(t, "feat")
	if w.State != "up" || w.service(t, "web").Pid != s.otherPid || !alive(s.otherPid) {
		t.Errorf("after %s: the other project's world is %s, web pid %d (was %d); want up and untouched", after, w.State, w.service(t, "web").Pid, s.otherPid)
	}
	if b, err := os.ReadFile(s.otherFile); err != nil || string(b) != "work in progress\n" {
		t.Errorf("after %s: the other project's uncommitted file: %q, %v", after, b, err)
	}
	if got := gitOutIn(t, s.e, s.other, "worktree", "list", "--porcelain"); got != s.otherWorktreesBefore {
		t.Errorf("after %s: the other repository's worktrees changed:\n%s\nwas:\n%s", after, got, s.otherWorktreesBefore)
	}
	if _, err := os.Stat(filepath.Join(s.unrelatedWT, "README")); err != nil {
		t.Errorf("after %s: the unrelated repository's worktree is gone: %v", after, err)
	}
}

// refused fails the test unless r is a refusal of path that says why
// and printed nothing on stdout.
func refused(t *testing.T, what string, r result, path, why string) {
	t.Helper()
	if r.code == 0 || r.stdout != "" {
		t.Errorf("%s: exit %d, stdout %q; want a refusal and nothing on stdout", what, r.code, r.stdout)
	}
	for _, want := range []string{"refused " + path + ": ", why, "nothing was changed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr does not say %q:\n%s", what, want, r.stderr)
		}
	}
}

// TestHookClaudeRemoveConfine: WorktreeRemove payloads naming another
// project's world, another repository's worktree, a path in another
// repository's .git, a ".." escape and the project's main worktree are
// refused, and nothing of theirs changes.
func TestHookClaudeRemoveConfine(t *testing.T) {
	s := newConfineSetup(t)
	e := s.e
	for _, tt := range []struct{ name, path, why string }{
		{"another project's world", s.otherWT, "belongs to another repository"},
		{"another project's main worktree", s.other, "belongs to another repository"},
		{"an unrelated repository's worktree", s.unrelatedWT, "belongs to another repository"},
		{"another repository's .git", filepath.Join(s.other, ".git"), "inside a .git directory"},
		{"another repository's worktree admin dir", filepath.Join(s.other, ".git", "worktrees", "other-wt"), "inside a .git directory"},
		{"a .. escape", filepath.Join(e.repo, ".claude", "worktrees") + "/../../../other-wt", "belongs to another repository"},
		{"the project's main worktree", e.repo, "main worktree"},
	} {
		payload := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"WorktreeRemove","worktree_path":%q}`, e.repo, tt.path)
		r := e.hookRun(e.repo, "binky hook claude remove", payload, "CLAUDE_PROJECT_DIR="+e.repo)
		refused(t, "WorktreeRemove of "+tt.name, r, filepath.Clean(tt.path), tt.why)
		s.intact(t, "WorktreeRemove of "+tt.name)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "binky.toml")); err != nil {
		t.Errorf("the project's main worktree: %v", err)
	}
}

// TestHookClaudeCreateConfine: WorktreeCreate payloads that put the
// worktree in another repository's checkout, in its .git, beside the
// project, or through a ".." make nothing; the project's own place works.
func TestHookClaudeCreateConfine(t *testing.T) {
	s := newConfineSetup(t)
	e := s.e
	area := filepath.Join(e.repo, ".claude", "worktrees")
	for _, tt := range []struct{ name, payload, path, why string }{
		{"another repository's checkout", fmt.Sprintf(`{"name":"x","worktree_path":%q}`, filepath.Join(s.other, ".claude", "worktrees", "x")), filepath.Join(s.other, ".claude", "worktrees", "x"), "a hook adds a worktree only as " + area},
		{"another repository's .git", fmt.Sprintf(`{"name":"x","worktree_path":%q}`, filepath.Join(s.other, ".git", "x")), filepath.Join(s.other, ".git", "x"), "inside a .git directory"},
		{"a base_path in another repository", fmt.Sprintf(`{"name":"x","base_path":%q}`, s.otherWT), filepath.Join(s.otherWT, "x"), "a hook adds a worktree only as " + area},
		{"a .. escape", fmt.Sprintf(`{"name":"x","worktree_path":%q}`, area+"/../../../other/x"), filepath.Join(s.other, "x"), "a hook adds a worktree only as " + area},
		{"the project's own .git", fmt.Sprintf(`{"name":"x","worktree_path":%q}`, filepath.Join(e.repo, ".git", "x")), filepath.Join(e.repo, ".git", "x"), "inside a .git directory"},
	} {
		r := e.hookRun(e.repo, "binky hook claude create", tt.payload, "CLAUDE_PROJECT_DIR="+e.repo)
		refused(t, "WorktreeCreate in "+tt.name, r, tt.path, tt.why)
		if _, err := os.Lstat(tt.path); !os.IsNotExist(err) {
			t.Errorf("WorktreeCreate in %s made %s (lstat: %v)", tt.name, tt.path, err)
		}
		s.intact(t, "WorktreeCreate in "+tt.name)
	}
	if n := e.worktreeCount(); n != 1 {
		t.Errorf("the project has %d worktrees after the refused creates; want 1", n)
	}
	for _, w := range e.status().Worlds {
		if w.Project != runName("other") {
			t.Errorf("a refused create brought up %s/%s", w.Project, w.Worktree)
		}
	}
	// A name that is not one directory name never reaches the check.
	if r := e.hookRun(e.repo, "binky hook claude create", `{"name":"../../other/x"}`, "CLAUDE_PROJECT_DIR="+e.repo); r.code == 0 || !strings.Contains(r.stderr, "not one plain directory name") {
		t.Errorf("a name with ..: exit %d\n%s", r.code, r.stderr)
	}
	// The project's own place still works.
	want := filepath.Join(area, "ok")
	if r := e.hookRun(e.repo, "binky hook claude create", fmt.Sprintf(`{"name":"ok","worktree_path":%q}`, want), "CLAUDE_PROJECT_DIR="+e.repo); r.code != 0 || r.stdout != want+"\n" {
		t.Fatalf("WorktreeCreate in the project: exit %d, stdout %q\n%s\ndaemon log:\n%s", r.code, r.stdout, r.stderr, e.daemonLog())
	}
}

// TestHookUpDownConfine: `binky hook down|up PATH` (worktrunk, Conductor)
// refuses a path of another repository: hook down would stop another
// project's world.
func TestHookUpDownConfine(t *testing.T) {
	s := newConfineSetup(t)
	e := s.e
	for _, tt := range []struct{ verb, path, why string }{
		{"down", s.otherWT, "belongs to another repository"},
		{"down", s.unrelatedWT, "belongs to another repository"},
		{"down", filepath.Join(s.other, ".git"), "inside a .git directory"},
		{"up", s.otherWT, "belongs to another repository"},
		{"up", filepath.Join(s.other, ".git", "worktrees"), "inside a .git directory"},
	} {
		r := e.hookRun(e.repo, "binky hook "+tt.verb+` "$P"`, "", "P="+tt.path)
		refused(t, "hook "+tt.verb+" "+tt.path, r, tt.path, tt.why)
		s.intact(t, "hook "+tt.verb+" "+tt.path)
	}
	// Run from outside any repository, a path cannot be checked.
	outside := t.TempDir()
	if r := e.hookRun(outside, `binky hook down "$P"`, "", "P="+s.otherWT); r.code == 0 || !strings.Contains(r.stderr, "not a worktree of a git repository") {
		t.Errorf("hook down from outside any repository: exit %d\n%s", r.code, r.stderr)
	}
	s.intact(t, "hook down from outside any repository")
	// The other project's own hook still works on its own worktree.
	if r := e.hookRun(s.otherWT, "binky hook down", ""); r.code != 0 {
		t.Fatalf("hook down in the other project's worktree: exit %d\n%s", r.code, r.stderr)
	}
	for _, w := range e.status().Worlds {
		if w.Worktree == "feat" {
			t.Errorf("hook down in its own worktree left the world %s/%s", w.Project, w.Worktree)
		}
	}
}

// TestHookInstallThroughPlantedFiles: a repository that commits
// <config>.binky-tmp as a symlink out of it, or whose config is a FIFO or
// a symlink to /dev/zero, cannot make `hook install` write outside it,
// hang or read without end.
func TestHookInstallThroughPlantedFiles(t *testing.T) {
	e := newEnv(t, agentsConfig)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	for _, c := range []struct{ tool, rel string }{{"claude", ".claude/settings.json"}, {"worktrunk", ".config/wt.toml"}} {
		path := filepath.Join(e.repo, filepath.FromSlash(c.rel))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.Symlink(victim, path+".binky-tmp")
		e.git("add", "-A")
		e.git("commit", "-q", "-m", "plant "+c.rel+".binky-tmp")
		e.must("hook", "install", c.tool)
		if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
			t.Fatalf("hook install %s through a committed %s.binky-tmp symlink wrote %q outside the repository", c.tool, c.rel, b)
		}
		if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s after install: %v, %v; want a regular file", path, st, err)
		}

		// A symlink as the config itself: to /dev/zero, and to the victim.
		for _, target := range []string{"/dev/zero", victim} {
			os.Remove(path)
			os.Symlink(target, path)
			r := e.binky("hook", "install", c.tool)
			if r.code != 1 || !strings.Contains(r.stderr, path+" is a symlink") {
				t.Errorf("hook install %s over a symlink to %s: exit %d\n%s", c.tool, target, r.code, r.stderr)
			}
			if to, _ := os.Readlink(path); to != target {
				t.Errorf("the symlink now points to %q; want %s", to, target)
			}
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
			t.Fatalf("hook install %s through a symlinked config wrote %q outside the repository", c.tool, b)
		}

		// A FIFO: refused at once (binkyIn's deadline ends a hang, and
		// the exit is then not 1).
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal("mkfifo:", err)
		}
		r := e.binky("hook", "install", c.tool)
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if r.code != 1 || !strings.Contains(r.stderr, path+" is a FIFO, not a regular file") {
			t.Errorf("hook install %s over a FIFO: exit %d\n%s", c.tool, r.code, r.stderr)
		}
		os.Remove(path)
	}
}
