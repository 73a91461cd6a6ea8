package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarmWorktree: a new worktree gets the main worktree's ignored
// node_modules tree and .env.local before its services start (the
// service's health check needs node_modules), and [worktree] setup runs
// once; an up after down does not run it again, a change to its input
// does, and a failing setup fails up with the tail of its output.
func TestWarmWorktree(t *testing.T) {
	e := newEnv(t, `
[project]
name = "warm"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
health = { exec = "test -f node_modules/pkg/index.js && test -f .env.local" }

[worktree]
copy   = ["node_modules", ".env.local"]
setup  = ["echo run >> .setup-runs", "sh ./setup.sh"]
inputs = ["deps.lock"]
`)
	write := func(dir, rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(e.repo, ".gitignore", "node_modules/\n.env.local\n.setup-runs\n")
	write(e.repo, "deps.lock", "pkg 1.0\n")
	write(e.repo, "setup.sh", "test -f node_modules/pkg/index.js || { echo 'node_modules missing at setup' >&2; exit 1; }\n")
	e.git("add", "-A")
	e.git("commit", "-qm", "warm")
	// The main worktree's ignored caches.
	write(e.repo, "node_modules/pkg/index.js", "module.exports = 1\n")
	write(e.repo, "node_modules/pkg/package.json", `{"name":"pkg"}`)
	if err := os.Symlink("../pkg/index.js", filepath.Join(e.repo, "node_modules", "pkg-bin")); err != nil {
		t.Fatal(err)
	}
	write(e.repo, ".env.local", "SECRET_THING=local\n")

	out := e.must("up", "feat/x")
	wt := ""
	for _, w := range e.status().Worlds {
		if w.Branch == "feat/x" {
			wt = w.Path
		}
	}
	if wt == "" {
		t.Fatalf("no world for feat/x after up:\n%s", out.stdout)
	}
	if got := read(filepath.Join(wt, "node_modules/pkg/index.js")); got != "module.exports = 1\n" {
		t.Errorf("node_modules/pkg/index.js in the new worktree = %q", got)
	}
	if got, _ := os.Readlink(filepath.Join(wt, "node_modules", "pkg-bin")); got != "../pkg/index.js" {
		t.Errorf("node_modules/pkg-bin links to %q; want the symlink kept", got)
	}
	if got := read(filepath.Join(wt, ".env.local")); got != "SECRET_THING=local\n" {
		t.Errorf(".env.local in the new worktree = %q", got)
	}
	runs := func() int { return strings.Count(read(filepath.Join(wt, ".setup-runs")), "run") }
	if n := runs(); n != 1 {
		t.Fatalf("setup ran %d times on the first up; want 1", n)
	}
	if log := read(filepath.Join(e.home, "logs", e.project, worldOf(t, e, "feat/x"), "setup.log")); !strings.Contains(log, "--- binky: setup[1]") {
		t.Errorf("setup.log does not record the runs:\n%s", log)
	}
	if r := e.must("logs", "feat/x", "setup"); !strings.Contains(r.stdout, "--- binky: setup[1]") {
		t.Errorf("binky logs feat/x setup does not show the setup log:\n%s", r.stdout)
	}

	e.must("down", "feat/x")
	e.must("up", "feat/x")
	if n := runs(); n != 1 {
		t.Fatalf("setup ran %d times after a second up with nothing changed; want 1", n)
	}

	e.must("down", "feat/x")
	write(wt, "deps.lock", "pkg 2.0\n")
	e.must("up", "feat/x")
	if n := runs(); n != 2 {
		t.Fatalf("setup ran %d times after its input changed; want 2", n)
	}

	// A failing setup fails up, with its tail (setup.sh is no input: the
	// lock file's change is what runs setup again).
	e.must("down", "feat/x")
	write(wt, "setup.sh", "echo 'resolving packages'\necho 'ERR_PNPM_FROZEN_LOCKFILE lockfile is out of date' >&2\nexit 7\n")
	write(wt, "deps.lock", "pkg 3.0\n")
	r := e.binky("up", "feat/x")
	if r.code == 0 {
		t.Fatalf("up succeeded with a failing setup:\n%s", r.stdout)
	}
	for _, want := range []string{"setup of worktree", "ERR_PNPM_FROZEN_LOCKFILE", "setup.log"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("failed up's stderr does not contain %q:\n%s", want, r.stderr)
		}
	}

	// A glob matching a tracked file is refused by check.
	cfg := strings.Replace(read(filepath.Join(e.repo, "binky.toml")), `copy   = ["node_modules", ".env.local"]`, `copy   = ["node_modules", "deps.lock"]`, 1)
	write(e.repo, "binky.toml", cfg)
	if r := e.binky("check"); r.code != 1 || !strings.Contains(r.stdout, "git tracks") {
		t.Errorf("check of a copy glob matching a tracked file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
