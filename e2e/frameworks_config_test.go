//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 27: binky.toml fits real frameworks (Miniflux, Redmine, BullMQ,
// Express). Each test is one rule of it, through the CLI.

// TestEnvFileFromMainWorktree: env_file = ".env" with .env git-ignored: a
// new worktree has no .env, and up reads the main worktree's; check warns
// and explains the lookup.
func TestEnvFileFromMainWorktree(t *testing.T) {
	e := newEnv(t, `
[project]
name = "envf"
port_range = PORTRANGE
env_file = ".env"

[services.app]
cmd    = "printf '%s' ${env.GREETING} > ${worktree.path}/greeting.out; exec sleep 600"
health = { exec = "test -s ${worktree.path}/greeting.out" }
`)
	os.WriteFile(filepath.Join(e.repo, ".gitignore"), []byte(".env\n"), 0o644)
	e.git("add", ".gitignore")
	e.git("commit", "-qm", "ignore .env")
	os.WriteFile(filepath.Join(e.repo, ".env"), []byte("GREETING=hello-from-main\n"), 0o600)

	r := e.binky("check")
	if r.code != 0 || !strings.Contains(r.stdout, "is git-ignored") || !strings.Contains(r.stdout, "main worktree") {
		t.Errorf("check: exit %d\n%s%s\nwant a warning that .env is git-ignored, explaining the main worktree lookup", r.code, r.stdout, r.stderr)
	}
	e.must("up", "-q", "feat/envfile")
	w := e.status().world(t, worldOf(t, e, "feat/envfile"))
	if _, err := os.Stat(filepath.Join(w.Path, ".env")); err == nil {
		t.Fatalf("the new worktree has a .env of its own; the test needs it without")
	}
	if got := read(filepath.Join(w.Path, "greeting.out")); got != "hello-from-main" {
		t.Errorf("${env.GREETING} in a new worktree = %q; want the main worktree's hello-from-main", got)
	}
}

// TestTokenTypoFails: ${db.urll} names a service and a field it does not
// have: check and up fail, suggesting url.
func TestTokenTypoFails(t *testing.T) {
	e := newEnv(t, `
[project]
name = "typo"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"

[services.app]
cmd = "echo ${db.urll}; exec sleep 600"
`)
	r := e.binky("check")
	if r.code != 1 || !strings.Contains(r.stdout, `did you mean "url"?`) {
		t.Errorf("check: exit %d\n%s%s\nwant exit 1 with did you mean \"url\"", r.code, r.stdout, r.stderr)
	}
	r = e.binky("up", "-q", "main")
	if r.code == 0 || !strings.Contains(r.stderr, `did you mean "url"?`) {
		t.Errorf("up: exit %d\n%s\nwant a failure with did you mean \"url\"", r.code, r.stderr)
	}
}

// TestEnvValuesNotSecretsShowInLogs: ${env.PORT} = 3000 is an ordinary
// value, shown unmasked in binky logs; ${env.APP_TOKEN} stays masked.
func TestEnvValuesNotSecretsShowInLogs(t *testing.T) {
	const token = "tok-e2e-abcdef-123"
	e := newEnv(t, `
[project]
name = "plain"
port_range = PORTRANGE

[services.app]
cmd = """
echo "listening on :${env.PORT}"
echo "token ${env.APP_TOKEN}"
echo end-of-output
exec sleep 600
"""
`)
	e.extra = []string{"PORT=3000", "APP_TOKEN=" + token}
	e.must("up", "-q", "main")
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out = e.must("logs", "main", "app", "-n", "0").stdout; strings.Contains(out, "end-of-output") {
			break
		}
	}
	if !strings.Contains(out, "end-of-output") {
		t.Fatalf("binky logs never showed the end marker:\n%s", out)
	}
	if !strings.Contains(out, "listening on :3000") {
		t.Errorf("binky logs masks ${env.PORT} = 3000; want it shown:\n%s", out)
	}
	if strings.Contains(out, token) {
		t.Errorf("binky logs shows the ${env.APP_TOKEN} secret:\n%s", out)
	}
}

// TestPortEnvUnset: env = { PORT = "" } leaves PORT unset in a service
// that has a port, even when the caller exports one; check notes it.
func TestPortEnvUnset(t *testing.T) {
	e := newEnv(t, `
[project]
name = "noport"
port_range = PORTRANGE

[services.web]
url    = "web"
env    = { PORT = "" }
cmd    = "(printenv PORT || echo unset) > ${worktree.path}/port.out; echo ${self.port} > ${worktree.path}/self-port.out; exec sleep 600"
health = { exec = "test -s ${worktree.path}/port.out" }
`)
	r := e.binky("check")
	if r.code != 0 || !strings.Contains(r.stdout, `note: env PORT = "" unsets $PORT`) {
		t.Errorf("check: exit %d\n%s%s\nwant a note saying PORT is unset", r.code, r.stdout, r.stderr)
	}
	e.extra = []string{"PORT=9999"}
	e.must("up", "-q", "main")
	w := e.status().world(t, "main")
	if got := read(filepath.Join(w.Path, "port.out")); got != "unset\n" {
		t.Errorf("PORT in the service = %q; want it unset", got)
	}
	if got := strings.TrimSpace(read(filepath.Join(w.Path, "self-port.out"))); got == "" || got == "9999" {
		t.Errorf("${self.port} = %q; want the world's port", got)
	}
}

// TestAbsoluteCwd: an absolute cwd is where the service runs; one that
// does not exist fails check.
func TestAbsoluteCwd(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, `
[project]
name = "abscwd"
port_range = PORTRANGE

[services.app]
cwd    = "`+dir+`"
cmd    = "pwd > ${worktree.path}/cwd.out; exec sleep 600"
health = { exec = "test -s ${worktree.path}/cwd.out" }
`)
	r := e.binky("check")
	if r.code != 0 || !strings.Contains(r.stdout, "is absolute") || strings.Contains(r.stdout, "warning") {
		t.Errorf("check: exit %d\n%s%s\nwant a note that cwd is absolute and no warning", r.code, r.stdout, r.stderr)
	}
	e.must("up", "-q", "main")
	w := e.status().world(t, "main")
	if got := strings.TrimSpace(read(filepath.Join(w.Path, "cwd.out"))); got != dir {
		t.Errorf("the service ran in %q; want the absolute cwd %q", got, dir)
	}

	missing := filepath.Join(dir, "missing")
	cfg := strings.ReplaceAll(read(filepath.Join(e.repo, "binky.toml")), `cwd    = "`+dir+`"`, `cwd    = "`+missing+`"`)
	os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(cfg), 0o644)
	if r := e.binky("check"); r.code != 1 || !strings.Contains(r.stdout, "does not exist") {
		t.Errorf("check with a missing absolute cwd: exit %d\n%s%s\nwant exit 1, does not exist", r.code, r.stdout, r.stderr)
	}
}

// TestGoldenFollowsSeedEnv: the golden template is keyed by the adapter
// service's rendered env: the same seed password clones, a new one builds
// a new template.
func TestGoldenFollowsSeedEnv(t *testing.T) {
	e := newEnv(t, `
[project]
name = "goldenv"
port_range = PORTRANGE

[services.db]
adapter    = "sqlite"
migrate    = "binky-demo-app migrate --db '${self.url}'"
seed       = "binky-demo-app seed --db '${self.url}'"
clone_from = "golden"
inputs     = ["binky.toml"]
env        = { SEED_ADMIN_PASSWORD = "${env.SEED_PW}" }
`)
	e.must("daemon", "start")
	e.extra = []string{"SEED_PW=first-pass"}
	e.must("up", "-q", "g/1")
	e.must("up", "-q", "g/2")
	if n := countAll(t, e, "golden_built"); n != 1 {
		t.Errorf("golden_built %d times for two ups with one seed env; want 1", n)
	}
	e.extra = []string{"SEED_PW=second-pass"}
	e.must("up", "-q", "g/3")
	if n := countAll(t, e, "golden_built"); n != 2 {
		t.Errorf("golden_built %d times after the seed's password changed; want 2", n)
	}
}

// TestFoldedBranchNames: feat/one's world is feat-one; a branch feat-one
// upped after it gets the hash; a world keeps the name it was recorded
// with.
func TestFoldedBranchNames(t *testing.T) {
	e := newEnv(t, `
[project]
name = "names"
port_range = PORTRANGE

[services.app]
cmd = "exec sleep 600"
`)
	e.must("up", "-q", "feat/one")
	if got := worldOf(t, e, "feat/one"); got != "feat-one" {
		t.Errorf("world of feat/one = %q; want feat-one", got)
	}
	e.git("branch", "feat-one")
	e.must("up", "-q", "feat-one")
	second := worldOf(t, e, "feat-one")
	if second == "feat-one" || !strings.HasPrefix(second, "feat-one-") {
		t.Errorf("world of feat-one, upped second = %q; want feat-one-<hash>", second)
	}
	// feat/one's world goes; feat-one's keeps its recorded, hashed name.
	e.must("remove", "--force", "-q", "feat/one")
	e.must("down", "-q", "feat-one")
	e.must("up", "-q", "feat-one")
	if got := worldOf(t, e, "feat-one"); got != second {
		t.Errorf("world of feat-one after down and up = %q; want its recorded name %q", got, second)
	}
}

// TestStatusWarnsExposedListener: a service listening on every interface
// has a warning in status (text and --json).
func TestStatusWarnsExposedListener(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	e := newEnv(t, `
[project]
name = "exposed"
port_range = PORTRANGE

[services.web]
url    = "web"
cmd    = "exec python3 -m http.server --bind 0.0.0.0 ${self.port}"
health = "http://127.0.0.1:${self.port}/"
`)
	e.must("up", "-q", "main")
	r := e.must("status", "--json")
	if !strings.Contains(r.stdout, `"warning"`) || !strings.Contains(r.stdout, "every interface") {
		t.Errorf("status --json has no exposure warning:\n%s", r.stdout)
	}
	if r := e.must("status"); !strings.Contains(r.stdout, "warning: listens on 0.0.0.0") {
		t.Errorf("status has no exposure warning:\n%s", r.stdout)
	}
}
