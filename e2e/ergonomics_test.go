package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ergoSecret is a value the worker prints; no log reader may show it.
const ergoSecret = "ergo-sentinel-5ecret-7f3a9c"

// gitIn runs git in dir with the test's environment.
func (e *env) gitIn(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// commitNew makes dir, with the files in it, a repository on main with
// one commit.
func (e *env) commitNew(dir string) {
	e.t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		e.gitIn(dir, args...)
	}
}

// ergoConfig is the demo project with a verify command that reaches the
// API by its direct address, as a Go client that cannot resolve
// *.localhost must.
const ergoConfig = `
[project]
name = "ergo"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "binky-demo-app migrate --db '${self.url}'"
seed    = "binky-demo-app seed --db '${self.url}'"

[services.api]
cmd        = "binky-demo-app serve --db '${db.url}' --name '${worktree.name}'"
url        = "api"
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[services.worker]
cmd = "echo worker-token=${env.ERGO_SECRET}; exec sleep 600"

[agents]
expose = ["api", "db"]
verify = ["binky-demo-app check --url \"$BINKY_API_DIRECT_URL\""]
`

// TestErgonomicsCLI: verbs default to the worktree the caller stands in;
// env carries direct addresses; verify through them passes and shows a
// dirty tree; logs --json is one object a line; env of a down world
// warns; --project tells equal worktree names apart; up outside a
// repository says what to do.
func TestErgonomicsCLI(t *testing.T) {
	e := newEnv(t, ergoConfig)
	e.extra = append(e.extra, "ERGO_SECRET="+ergoSecret)
	up := e.must("up", "feat/a", "--json")
	var w struct {
		Path     string `json:"path"`
		Worktree string `json:"worktree"`
	}
	if err := json.Unmarshal([]byte(up.stdout), &w); err != nil {
		t.Fatalf("up --json: %v\n%s", err, up.stdout)
	}

	// env with no worktree, standing in the worktree.
	var env map[string]string
	r := e.binkyIn(w.Path, "env")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &env) != nil {
		t.Fatalf("env in the worktree: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Join(sortedKeysOf(env), ","); got != "api,db" || !strings.Contains(env["api"], ".localhost") {
		t.Errorf("env in the worktree: %v; want api (proxied) and db", env)
	}
	if r.stderr != "" {
		t.Errorf("env of an up world wrote to stderr: %q", r.stderr)
	}
	var direct map[string]string
	json.Unmarshal([]byte(e.must("env", "feat/a", "--direct").stdout), &direct)
	if !strings.HasPrefix(direct["api"], "http://127.0.0.1:") || direct["db"] != env["db"] {
		t.Fatalf("env --direct: %v; want api at http://127.0.0.1:<port> and db unchanged", direct)
	}
	resp, err := http.Get(direct["api"] + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET %s/healthz: %v %v; want 200", direct["api"], resp, err)
	} else {
		resp.Body.Close()
	}
	dot := e.must("env", "feat/a", "--dotenv").stdout
	if !strings.Contains(dot, "BINKY_API_DIRECT_URL='"+direct["api"]+"'") || !strings.Contains(dot, "BINKY_API_URL='"+env["api"]+"'") {
		t.Errorf("env --dotenv lacks the direct or the proxied API address:\n%s", dot)
	}

	// verify with no worktree: passes through the direct address; a dirty
	// tree is recorded and shown.
	if r := e.binkyIn(w.Path, "verify"); r.code != 0 || !strings.Contains(r.stderr, "verify passed at") || strings.Contains(r.stderr, "+dirty") {
		t.Errorf("verify in a clean worktree: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(w.Path, "scratch.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.binkyIn(w.Path, "verify"); r.code != 0 || !strings.Contains(r.stderr, "+dirty") {
		t.Errorf("verify in a dirty worktree: exit %d; want passed at <commit>+dirty\n%s", r.code, r.stderr)
	}
	if st := e.must("status").stdout; !strings.Contains(st, "+dirty") {
		t.Errorf("status does not show the dirty verify run:\n%s", st)
	}

	// logs --json: one object per line, redacted, with no worktree given.
	r = e.binkyIn(w.Path, "logs", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("logs --json: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	services := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o struct{ Project, Worktree, Service, Line string }
		if err := json.Unmarshal([]byte(l), &o); err != nil || o.Service == "" || o.Worktree != w.Worktree || o.Project != e.project {
			t.Errorf("logs --json line %q: %+v %v; want an object naming its service", l, o, err)
		}
		services[o.Service] = true
	}
	if !services["api"] || !services["worker"] || strings.Contains(r.stdout, ergoSecret) || !strings.Contains(r.stdout, "worker-token=") {
		t.Errorf("logs --json: services %v; want api and worker, the worker's token line with its secret masked:\n%s", services, r.stdout)
	}

	// down with no worktree; env then warns on stderr.
	if r := e.binkyIn(w.Path, "down"); r.code != 0 {
		t.Fatalf("down in the worktree: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.binkyIn(w.Path, "env"); r.code != 0 || !strings.Contains(r.stderr, "is down") {
		t.Errorf("env of a down world: exit %d, stderr %q; want a warning that it is down", r.code, r.stderr)
	}

	// A second project with a worktree of the same name.
	other := filepath.Join(filepath.Dir(e.repo), "other")
	os.MkdirAll(other, 0o755)
	cfg := e.render(strings.Replace(ergoConfig, `name = "ergo"`, `name = "other"`, 1))
	os.WriteFile(filepath.Join(other, "binky.toml"), []byte(cfg), 0o644)
	otherProject := runName("other")
	e.commitNew(other)
	if r := e.binkyIn(other, "up", "feat/a", "-q"); r.code != 0 {
		t.Fatalf("up in the second project: exit %d\n%s", r.code, r.stderr)
	}
	outside := t.TempDir()
	if r := e.binkyIn(outside, "env", "feat/a"); r.code == 0 || !strings.Contains(r.stderr, "several projects") {
		t.Errorf("env feat/a outside both projects: exit %d %q; want an ambiguity error", r.code, r.stderr)
	}
	var oe map[string]string
	r = e.binkyIn(outside, "env", "feat/a", "--project", otherProject)
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &oe) != nil || !strings.Contains(oe["api"], "."+otherProject+".localhost") {
		t.Errorf("env feat/a --project other: exit %d %q %q; want the other project's coordinates", r.code, r.stdout, r.stderr)
	}
	if r := e.binkyIn(outside, "env", "feat/a", "--project", "nope"); r.code == 0 || !strings.Contains(r.stderr, `project "nope" has no world`) {
		t.Errorf("env --project nope: exit %d %q; want not found", r.code, r.stderr)
	}
	if r := e.binkyIn(outside, "down", "--project", otherProject, "feat/a"); r.code != 0 {
		t.Errorf("down --project other feat/a: exit %d %q", r.code, r.stderr)
	}
	e.binkyIn(other, "remove", "--force", "-q", "feat/a")
	if r := e.binkyIn(other, "remove", "--force", "-q"); r.code == 0 {
		t.Errorf("remove with no worktree in a main worktree without a world: exit 0; want an error")
	}

	// up (and env) outside any repository: a hint, not a raw git error.
	if r := e.binkyIn(outside, "up"); r.code == 0 || !strings.Contains(r.stderr, "not inside a git repository") {
		t.Errorf("up outside a repository: exit %d %q; want the hint", r.code, r.stderr)
	}
	if r := e.binkyIn(outside, "env"); r.code == 0 || !strings.Contains(r.stderr, "give the worktree's name or branch") {
		t.Errorf("env outside a repository: exit %d %q; want a hint to name the worktree", r.code, r.stderr)
	}
}

// TestErgonomicsMCP: the logs tool tails and greps, bounded and redacted;
// the reset tool resets; env carries the direct address.
func TestErgonomicsMCP(t *testing.T) {
	e := newEnv(t, ergoConfig)
	e.must("daemon", "start")
	c := e.startMCP("ERGO_SECRET=" + ergoSecret)
	w := decodeAs[mcpWorld](t, mustOK(t, c, "up", map[string]any{"branch": "feat/m"}, ""))

	var er struct {
		State     string            `json:"state"`
		Direct    map[string]string `json:"direct"`
		Variables map[string]string `json:"variables"`
	}
	json.Unmarshal(mustOK(t, c, "env", map[string]any{"worktree": "feat/m"}, "").structured, &er)
	if !strings.HasPrefix(er.Direct["api"], "http://127.0.0.1:") || er.Variables["BINKY_API_DIRECT_URL"] != er.Direct["api"] || er.State != "up" {
		t.Errorf("env: %+v; want api's direct address in direct and variables, state up", er)
	}

	type logsRes struct {
		Services []struct {
			Service   string   `json:"service"`
			Lines     []string `json:"lines"`
			Truncated bool     `json:"truncated"`
		} `json:"services"`
	}
	all := decodeAs[logsRes](t, mustOK(t, c, "logs", map[string]any{"worktree": "feat/m", "service": "api"}, ""))
	if len(all.Services) != 1 || !strings.Contains(strings.Join(all.Services[0].Lines, "\n"), "listening on") {
		t.Errorf("logs of api: %+v; want its listening line", all)
	}
	none := decodeAs[logsRes](t, mustOK(t, c, "logs", map[string]any{"worktree": "feat/m", "grep": "^no such line$"}, ""))
	for _, s := range none.Services {
		if len(s.Lines) != 0 {
			t.Errorf("logs grep that matches nothing returned %s: %q", s.Service, s.Lines)
		}
	}
	one := decodeAs[logsRes](t, mustOK(t, c, "logs", map[string]any{"worktree": "feat/m", "service": "api", "lines": 1, "grep": "listening|healthz|."}, ""))
	if len(one.Services) != 1 || len(one.Services[0].Lines) > 1 {
		t.Errorf("logs lines=1: %+v; want at most one line", one)
	}
	if r := c.call("logs", map[string]any{"worktree": "feat/m", "lines": 100000}, ""); !r.isError {
		t.Errorf("logs lines=100000: got no error; want the bound refused")
	}
	if r := c.call("logs", map[string]any{"worktree": "feat/m", "grep": "("}, ""); !r.isError {
		t.Errorf("logs with a bad regexp: got no error")
	}

	// The worker printed a secret: the tool masks it as binky logs does.
	wl := mustOK(t, c, "logs", map[string]any{"worktree": "feat/m", "service": "worker", "grep": "worker-token"}, "")
	if strings.Contains(wl.json, ergoSecret) || !strings.Contains(wl.json, "worker-token=") {
		t.Errorf("logs of worker: %s; want its token line with the secret masked", wl.json)
	}

	rs := mustOK(t, c, "reset", map[string]any{"worktree": "feat/m", "service": "db"}, "reset")
	if rw := decodeAs[mcpWorld](t, rs); rw.Worktree != w.Worktree {
		t.Errorf("reset: got world %q; want %q", rw.Worktree, w.Worktree)
	}
	if r := c.call("reset", map[string]any{"worktree": "feat/m", "service": "nope"}, ""); !r.isError {
		t.Errorf("reset of an unknown service: got no error")
	}
}

// TestStatusFailedServiceTail: status shows the last log lines of a
// service that failed, redacted; completion lists live names and never
// starts a daemon.
func TestStatusFailedServiceTail(t *testing.T) {
	e := newEnv(t, `
[project]
name = "tail"
port_range = PORTRANGE

[services.ok]
cmd = "exec sleep 600"

[services.crash]
cmd = "echo crash-detail-${env.ERGO_SECRET}; echo last-words; exit 3"
restart = "never"
`)
	// Completion with no daemon: nothing live, and no daemon started.
	if out := e.must("__complete", "--", "env", "").stdout; out != "" {
		t.Errorf("completion with no daemon: %q; want nothing", out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "daemon.sock")); err == nil {
		t.Errorf("completion started a daemon")
	}

	e.extra = append(e.extra, "ERGO_SECRET="+ergoSecret)
	e.binky("up", "feat/t", "-q")
	deadline := time.Now().Add(20 * time.Second)
	var st string
	for time.Now().Before(deadline) {
		st = e.must("status").stdout
		if strings.Contains(st, "last-words") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(st, "crash, last log lines") || !strings.Contains(st, "last-words") || !strings.Contains(st, "crash-detail-***") || strings.Contains(st, ergoSecret) {
		t.Errorf("status of a world with a failed service: want its last log lines, redacted:\n%s", st)
	}
	if strings.Contains(st, "ok, last log lines") {
		t.Errorf("status shows log lines of a running service:\n%s", st)
	}
	var js struct {
		Worlds []struct {
			Services []struct {
				Name    string   `json:"name"`
				LogTail []string `json:"log_tail"`
			} `json:"services"`
		} `json:"worlds"`
	}
	json.Unmarshal([]byte(e.must("status", "--json").stdout), &js)
	found := false
	for _, w := range js.Worlds {
		for _, s := range w.Services {
			if s.Name == "crash" && len(s.LogTail) > 0 && s.LogTail[len(s.LogTail)-1] == "last-words" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("status --json: no log_tail ending in last-words for crash: %+v", js)
	}

	// Completion with the daemon up: live worktree, branch and services.
	wt := ""
	for _, l := range strings.Split(e.must("__complete", "--", "logs", "").stdout, "\n") {
		if l == "feat-t" || strings.HasPrefix(l, "feat-t-") {
			wt = l
		}
	}
	if wt == "" {
		t.Fatalf("completion of logs lists no feat-t-… worktree")
	}
	if got := e.must("__complete", "--", "logs", wt, "").stdout; got != "crash\nok\n" {
		t.Errorf("completion of logs %s: %q; want crash and ok", wt, got)
	}
	if got := e.must("__complete", "--", "up", "feat/").stdout; got != "feat/t\n" {
		t.Errorf("completion of up feat/: %q; want feat/t", got)
	}
}
