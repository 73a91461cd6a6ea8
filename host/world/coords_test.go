package world

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/config"
)

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, diags, err := config.Parse("binky.toml", []byte(src))
	if err != nil || diags.HasErrors() {
		t.Fatalf("parse: %v %v", err, diags)
	}
	return cfg
}

const sample = `
[project]
name = "acme"

[services.db]
adapter = "postgres"
admin_url = "${env.PG_ADMIN_URL}"

[services.api]
cmd = "api --port ${self.port}"
url = "api"
depends_on = ["db"]
env = { DATABASE_URL = "${db.url}" }

[services.worker]
cmd = "worker"

[services.debugger]
cmd = "dbg"
ports = ["http", "debug"]

[agents]
expose = ["api", "db", "debugger", "worker"]
`

func TestPortPlan(t *testing.T) {
	cfg := parse(t, sample)
	plan, size := portPlan(cfg, 20000)
	if size != 3 {
		t.Errorf("size = %d; want 3", size)
	}
	want := map[string]map[string]int{"api": {"http": 20000}, "debugger": {"http": 20001, "debug": 20002}}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan = %v; want %v", plan, want)
	}
}

func TestCoordsAndExpose(t *testing.T) {
	cfg := parse(t, sample)
	plan, _ := portPlan(cfg, 20000)
	w := &world{
		cfg: cfg, project: "acme", worktree: "feat-a-1b2c3d", path: "/w",
		plan: plan, env: map[string]string{"PG_ADMIN_URL": "postgres://u:pw@h:5432/postgres"},
		slices:   map[string]slice{"db": {Address: "postgres://u:pw@db.local:5433/acme_feat", Values: map[string]string{"database": "acme_feat"}}},
		proxyURL: func(h string) string { return "http://" + h + ":7355" },
		hostOf:   func(svc string) string { return svc + ".feat-a-1b2c3d.acme.localhost" },
	}
	c := w.coords()
	for k, v := range map[string]string{
		"api.port":             "20000",
		"api.ports.http":       "20000",
		"api.url":              "http://api.feat-a-1b2c3d.acme.localhost:7355",
		"debugger.port":        "20001",
		"debugger.ports.debug": "20002",
		"debugger.url":         "http://localhost:20001",
		"db.url":               "postgres://u:pw@db.local:5433/acme_feat",
		"db.host":              "db.local",
		"db.port":              "5433",
		"db.database":          "acme_feat",
		"worktree.name":        "feat-a-1b2c3d",
		"project.name":         "acme",
		"env.PG_ADMIN_URL":     "postgres://u:pw@h:5432/postgres",
	} {
		if c[k] != v {
			t.Errorf("coords[%q] = %q; want %q", k, c[k], v)
		}
	}
	if _, ok := c["worker.port"]; ok {
		t.Errorf("worker asks for no port but got one")
	}
	if got := w.render(cfg.Services["api"].Cmd, "api", c); got != "api --port 20000" {
		t.Errorf("render = %q", got)
	}
	exp, order := w.exposed(c)
	if !reflect.DeepEqual(order, []string{"api", "db", "debugger"}) {
		t.Errorf("expose order = %v; want api, db, debugger (worker has no coordinate)", order)
	}
	if exp["db"] != "postgres://u:pw@db.local:5433/acme_feat" || len(exp) != 3 {
		t.Errorf("exposed = %v", exp)
	}
}

// TestResolveEnvOrder: the caller's environment, then env_file; the
// daemon's own environment is never consulted.
func TestResolveEnvOrder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".env"), []byte("A=from-file\nB=from-file\n"), 0o600)
	cfg := parse(t, `
[project]
name = "p"
env_file = ".env"

[services.x]
cmd = "run"
env = { A = "${env.A}", B = "${env.B}" }
`)
	t.Setenv("B", "daemon-loses")
	got, err := resolveEnv(cfg, dir, map[string]string{"A": "from-caller"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "from-caller", "B": "from-file"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resolveEnv = %v; want %v", got, want)
	}

	t.Setenv("BINKY_TEST_DAEMON_ONLY", "from-daemon")
	cfg = parse(t, "[project]\nname = \"p\"\n[services.x]\ncmd = \"run\"\nenv = { K = \"${env.BINKY_TEST_DAEMON_ONLY}\" }\n")
	_, err = resolveEnv(cfg, dir, map[string]string{"OTHER": "x"})
	if err == nil || !strings.Contains(err.Error(), "BINKY_TEST_DAEMON_ONLY") || !strings.Contains(err.Error(), "your environment") {
		t.Errorf("a variable only the daemon has: got %v; want it reported missing", err)
	}
	if err != nil && strings.Contains(err.Error(), "daemon") {
		t.Errorf("the error should not send the user to the daemon's environment: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h/db": "postgres://u:***@h/db",
		"redis://h:6379/0":         "redis://h:6379/0",
		"sqlite:///tmp/x.db":       "sqlite:///tmp/x.db",
		"mysql://root@h:3306/d":    "mysql://root@h:3306/d",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"connect: failed to connect to `user=postgres`:\n\t127.0.0.1:1 (127.0.0.1): dial error: connection refused", "connect: failed to connect to `user=postgres`: 127.0.0.1:1 (127.0.0.1): dial error: connection refused"},
		{"service web is not healthy: 503\nlog line 1\nlog line 2", "service web is not healthy: 503"},
		{strings.Repeat("é", 300), strings.Repeat("é", 200) + "…"},
	} {
		if got := OneLine(c.in); got != c.want {
			t.Errorf("OneLine(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
