//go:build !windows

package world

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
)

// testWorld builds a world of one cmd service "api" and one adapter service
// "db" (with a migrate), rooted at path.
func testWorld(t *testing.T, path, cmd, health, migrate string, env, caller map[string]string) (*Engine, *world, *registry.Worktree) {
	t.Helper()
	q := func(s string) string { return "'''" + s + "'''" }
	cfg := parse(t, `
[project]
name = "acme"

[services.db]
adapter = "sqlite"
migrate = `+q(migrate)+`

[services.api]
cmd = `+q(cmd)+`
ports = ["http"]
health = { exec = `+q(health)+` }
env = { FROM_TOML = "${env.X}" }
`)
	plan, _ := portPlan(cfg, 20000)
	w := &world{cfg: cfg, project: "acme", worktree: "wt", path: path, plan: plan,
		slices: map[string]slice{"db": {Address: "sqlite:///tmp/x.db"}}, env: env, caller: caller}
	rec := &registry.Worktree{Project: "acme", Name: "wt", Path: path}
	return &Engine{home: t.TempDir()}, w, rec
}

// TestServiceEnvIsTheCallers: a service, its exec health check and its
// migrate start from the environment of the caller whose verb started them,
// never from the daemon's; BINKY_HOME and a caller's own supervisor marker
// are withheld.
func TestServiceEnvIsTheCallers(t *testing.T) {
	t.Setenv("BINKY_TEST_DAEMON_ONLY", "leak")
	caller := map[string]string{
		"PATH": os.Getenv("PATH"), "BINKY_TEST_CALLER_ONLY": "mine", "X": "x-value",
		"BINKY_HOME": "/elsewhere", "BINKY_SERVICE": "other/wt/svc", "BINKY_TOKEN_STALE": "old",
	}
	d, w, rec := testWorld(t, t.TempDir(), "exec run", "true", "migrate", map[string]string{"X": "x-value"}, caller)
	coords := w.coords()
	spec, err := d.serviceSpec(w, rec, w.cfg.Services["api"], coords)
	if err != nil {
		t.Fatal(err)
	}
	_, hookEnv, err := d.hookCommand(w, rec, w.cfg.Services["db"], "migrate", coords)
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]string{"service": spec.Env, "health": spec.Health.Env, "migrate": hookEnv} {
		for _, want := range []string{"BINKY_TEST_CALLER_ONLY=mine", "BINKY_PROJECT=acme", "BINKY_WORKTREE=wt"} {
			if !slices.Contains(env, want) {
				t.Errorf("%s env lacks %s: %q", name, want, env)
			}
		}
		for _, kv := range env {
			for _, banned := range []string{"BINKY_TEST_DAEMON_ONLY=", "BINKY_HOME=", "BINKY_SERVICE=", "BINKY_TOKEN_STALE="} {
				if strings.HasPrefix(kv, banned) {
					t.Errorf("%s env has %s", name, kv)
				}
			}
		}
	}
	if !slices.Contains(spec.Env, "PORT=20000") || !slices.Contains(spec.Env, "FROM_TOML=x-value") {
		t.Errorf("service env lacks PORT or its rendered env: %q", spec.Env)
	}
	if v := verifyEnv(rec, api.EnvResult{Project: "acme", Worktree: "wt"}, caller, "/the/home"); !slices.Contains(v, "BINKY_HOME=/the/home") || !slices.Contains(v, "BINKY_TEST_CALLER_ONLY=mine") || slices.Contains(v, "BINKY_TEST_DAEMON_ONLY=leak") {
		t.Errorf("verify env = %q; want the caller's, with this daemon's BINKY_HOME", v)
	}
}

// TestTokensNeverRunAsShell: a worktree path holding a command substitution
// and an ${env.*} value holding shell metacharacters reach cmd, the exec
// health check and migrate as data: run by the real sh, nothing executes,
// nothing splits, and the command line itself never holds the values.
func TestTokensNeverRunAsShell(t *testing.T) {
	base := t.TempDir()
	pwned := filepath.Join(base, "pwned")
	path := filepath.Join(base, "$(touch${IFS}"+pwned+")", "repo")
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	const value = "p&?#q; echo SPLIT"
	env := map[string]string{"X": value}
	caller := map[string]string{"PATH": os.Getenv("PATH")}
	d, w, rec := testWorld(t, path,
		`cd ${worktree.path} && printf "[%s]\n" ${env.X} '${env.X}' > cmd.out`,
		`cd ${worktree.path} && printf "[%s]\n" ${env.X} > health.out`,
		`cd "${worktree.path}" && printf "[%s]\n" ${env.X} > migrate.out`,
		env, caller)
	coords := w.coords()
	spec, err := d.serviceSpec(w, rec, w.cfg.Services["api"], coords)
	if err != nil {
		t.Fatal(err)
	}
	migrate, hookEnv, err := d.hookCommand(w, rec, w.cfg.Services["db"], w.cfg.Services["db"].Migrate, coords)
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name, command, out, want string
		env                      []string
	}{
		{"cmd", spec.Command, "cmd.out", "[" + value + "]\n[" + value + "]\n", spec.Env},
		{"health exec", spec.Health.Exec, "health.out", "[" + value + "]\n", spec.Health.Env},
		{"migrate", migrate, "migrate.out", "[" + value + "]\n", hookEnv},
	}
	for _, r := range runs {
		if strings.Contains(r.command, value) || strings.Contains(r.command, "touch") {
			t.Errorf("%s: the command line holds a value: %s", r.name, r.command)
		}
		cmd := exec.Command("sh", "-c", r.command)
		cmd.Dir = base
		cmd.Env = r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s\ncommand: %s", r.name, err, out, r.command)
			continue
		}
		if got := read(t, filepath.Join(path, r.out)); got != r.want {
			t.Errorf("%s printed %q; want %q (command: %s)", r.name, got, r.want, r.command)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the worktree path ran as a command: %s exists", pwned)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, _ := os.ReadFile(p)
	return string(b)
}

// TestURLServiceWithoutHealthIsProbedOnItsPort: a proxied service with no
// health check of its own is probed by a connect to its port, so it is
// never running on a port nothing answers on (issue 39); a service with
// ports alone keeps none.
func TestURLServiceWithoutHealthIsProbedOnItsPort(t *testing.T) {
	cfg := parse(t, `
[project]
name = "acme"

[services.web]
cmd = "exec serve"
url = "web"

[services.worker]
cmd = "exec work"
ports = ["metrics"]
`)
	plan, _ := portPlan(cfg, 20000)
	w := &world{cfg: cfg, project: "acme", worktree: "wt", path: t.TempDir(), plan: plan, slices: map[string]slice{}}
	rec := &registry.Worktree{Project: "acme", Name: "wt", Path: w.path}
	e := &Engine{home: t.TempDir()}
	coords := w.coords()
	web, err := e.serviceSpec(w, rec, cfg.Services["web"], coords)
	if err != nil {
		t.Fatal(err)
	}
	if web.Health == nil || web.Health.TCP != "127.0.0.1:20000" {
		t.Errorf("web's probe = %+v; want a connect to 127.0.0.1:20000", web.Health)
	}
	worker, err := e.serviceSpec(w, rec, cfg.Services["worker"], coords)
	if err != nil {
		t.Fatal(err)
	}
	if worker.Health != nil {
		t.Errorf("worker's probe = %+v; want none (it has ports, no url, no health)", worker.Health)
	}
}
