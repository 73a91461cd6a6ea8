package e2e

// The Windows end-to-end tier (docs/windows.md): a world driven from up to
// remove with cmd.exe commands. scripts/test-windows runs these (and only
// these: `-test.run ^TestWindows`) under Wine, with its git.exe bridge to
// the Linux git in its prefix (scripts/test-windows.d/gitbridge); on a
// Windows machine `go test ./e2e -run ^TestWindows` runs them with Git for
// Windows.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binkyhq/binky/internal/wine"
)

// hostileValue is cmd.exe syntax as a token's value: it must reach the
// program as data. (No `"`: no quoting carries it through the C runtime's
// split, docs/windows.md; no `%` or `!`: Wine's cmd.exe expands them again
// inside a delayed expansion, which Windows' does not.)
const hostileValue = `a & b | c > d ^ < (x) ' é 中 end`

const windowsConfig = `
[project]
name = "demo"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "binky-demo-app migrate --db \"${self.url}\""
seed    = "binky-demo-app seed --db \"${self.url}\""

[services.api]
cmd        = "binky-demo-app serve --db \"${db.url}\" --name \"${worktree.name}\""
url        = "api"
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[services.echo]
cmd        = "binky-demo-app serve --db ${db.url} --name ${env.HOSTILE}"
ports      = ["http"]
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[agents]
expose = ["api", "db"]
verify = ["binky-demo-app check --url \"http://127.0.0.1:${api.port}\" && cmd /c exit 0"]
`

// newWindowsEnv is newEnv with the home and the repository under a
// directory whose name holds spaces and non-ASCII characters.
func newWindowsEnv(t *testing.T, config string) *env {
	t.Helper()
	base := filepath.Join(t.TempDir(), "binky wörld 中 x")
	e := &env{t: t, home: filepath.Join(base, "home dir"), repo: filepath.Join(base, "my repo é"), rng: nextRange(60), leases: filepath.Join(base, "leases")}
	if err := os.MkdirAll(e.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	config = e.render(config)
	e.project, _, _, _ = projectName(config)
	if err := os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "init")
	e.extra = []string{"HOSTILE=" + hostileValue}
	t.Cleanup(e.cleanup)
	return e
}

func proxyPort(t *testing.T, e *env) int {
	t.Helper()
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	if ds.ProxyPort == 0 {
		t.Fatal("daemon status names no proxy port")
	}
	return ds.ProxyPort
}

// viaProxy asks the proxy for host.
func viaProxy(t *testing.T, port int, host string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("through the proxy to %s: %v", host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// visits reads the count the demo app's page shows.
func visits(t *testing.T, page string) int {
	t.Helper()
	var name string
	var n int
	if _, err := fmt.Sscanf(strings.TrimPrefix(page, "hello from world "), "%q: %d visits", &name, &n); err != nil {
		t.Fatalf("demo page %q: %v", page, err)
	}
	return n
}

func portFree(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestWindowsWorldLifecycle drives one world of cmd.exe commands and a
// sqlite slice through up, the proxy, env, verify, status, re-adoption
// after a daemon stop and start and after the daemon is killed, a second
// world beside it, down and remove.
func TestWindowsWorldLifecycle(t *testing.T) {
	e := newWindowsEnv(t, windowsConfig)
	e.must("up", "feat/a")

	a := e.status().world(t, "feat-a")
	if a.State != "up" {
		t.Fatalf("world feat-a: state %q; want up", a.State)
	}
	api, echo, db := a.service(t, "api"), a.service(t, "echo"), a.service(t, "db")
	if api.State != "running" || api.Pid == 0 {
		t.Fatalf("api: %+v; want running with a pid", api)
	}
	if !strings.Contains(db.Address, "binky wörld 中 x") && !strings.Contains(db.Address, "binky%20w") {
		t.Errorf("db slice %q is not under the home (a path with spaces and non-ASCII characters)", db.Address)
	}
	apiURL := fmt.Sprintf("http://127.0.0.1:%d/", api.Port)
	if got := get(t, apiURL); !strings.Contains(got, `world "feat-a"`) || !strings.Contains(got, "2 visits") {
		t.Errorf("api: %q; want world feat-a, 2 visits (1 seeded)", got)
	}
	// The hostile value reached the program as one argument, as data.
	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", echo.Port)); !strings.Contains(got, `world "`+hostileValue+`"`) {
		t.Errorf("echo: %q; want the value %q intact", got, hostileValue)
	}

	pp := proxyPort(t, e)
	if got := viaProxy(t, pp, "api.feat-a."+e.project+".localhost"); !strings.Contains(got, `world "feat-a"`) {
		t.Errorf("proxy for api.feat-a.%s.localhost: %q", e.project, got)
	}

	var envOut map[string]string
	if err := json.Unmarshal([]byte(e.must("env", "feat/a").stdout), &envOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(envOut["api"], "api.feat-a."+e.project+".localhost") || envOut["db"] == "" || len(envOut) != 2 {
		t.Errorf("env: %v; want api (proxied) and db", envOut)
	}
	if r := e.must("verify", "feat/a"); !strings.Contains(r.stdout+r.stderr, "verify passed") {
		t.Errorf("verify: %s%s", r.stdout, r.stderr)
	}

	// Re-adoption: the same process after daemon stop and start.
	visitsBefore := visits(t, get(t, apiURL))
	e.must("daemon", "stop")
	e.must("daemon", "start")
	if pid := e.status().world(t, "feat-a").service(t, "api").Pid; pid != api.Pid {
		t.Errorf("api pid after daemon stop+start: %d; want %d re-adopted", pid, api.Pid)
	}
	// And after the daemon is killed.
	dpid, err := strconv.Atoi(strings.TrimSpace(read(filepath.Join(e.home, "daemon.pid"))))
	if err != nil {
		t.Fatalf("daemon.pid: %v", err)
	}
	p, err := os.FindProcess(dpid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("kill the daemon (pid %d): %v", dpid, err)
	}
	p.Wait()
	waitFor(t, "the killed daemon's pipe to go", func() bool { return e.binky("daemon", "status").code != 0 })
	e.must("daemon", "start")
	if pid := e.status().world(t, "feat-a").service(t, "api").Pid; pid != api.Pid {
		t.Errorf("api pid after the daemon was killed: %d; want %d re-adopted", pid, api.Pid)
	}
	if got := visits(t, get(t, apiURL)); got != visitsBefore+1 {
		t.Errorf("api after the restarts: %d visits; want %d (the same process and slice)", got, visitsBefore+1)
	}

	// A second world at once.
	e.must("up", "feat/b")
	b := e.status().world(t, "feat-b")
	if b.Ports[0] <= a.Ports[1] && a.Ports[0] <= b.Ports[1] {
		t.Errorf("port blocks overlap: %v and %v", a.Ports, b.Ports)
	}
	pp = proxyPort(t, e)
	if got := viaProxy(t, pp, "api.feat-b."+e.project+".localhost"); !strings.Contains(got, `world "feat-b"`) || !strings.Contains(got, "2 visits") {
		t.Errorf("proxy for api.feat-b.%s.localhost: %q; want its own world and slice", e.project, got)
	}
	if got := viaProxy(t, pp, "api.feat-a."+e.project+".localhost"); !strings.Contains(got, `world "feat-a"`) {
		t.Errorf("proxy for api.feat-a.%s.localhost beside feat-b: %q", e.project, got)
	}

	// down ends the job (under Wine through the fallback, noted in the
	// service log), and the port is free again.
	e.must("down", "feat/a")
	for _, s := range e.status().world(t, "feat-a").Services {
		if s.Kind == "cmd" && (s.State == "running" || s.Pid != 0) {
			t.Errorf("after down, %s is %s pid %d", s.Name, s.State, s.Pid)
		}
	}
	waitFor(t, fmt.Sprintf("api's port %d to be free", api.Port), func() bool { return portFree(api.Port) })
	logs := e.must("logs", "feat/a", "api", "-n", "0").stdout
	if wine.Under() && !strings.Contains(logs, "; terminating it") {
		t.Errorf("api's log after down under Wine lacks the note that CTRL_BREAK could not be sent:\n%s", logs)
	}

	// remove takes the world, its worktree and its slice.
	e.must("remove", "--force", "feat/a")
	for _, w := range e.status().Worlds {
		if w.Worktree == "feat-a" {
			t.Errorf("feat-a still in status after remove: %+v", w)
		}
	}
	if _, err := os.Stat(a.Path); !os.IsNotExist(err) {
		t.Errorf("feat-a's worktree %s after remove: %v", a.Path, err)
	}
	if got := viaProxy(t, pp, "api.feat-b."+e.project+".localhost"); !strings.Contains(got, `world "feat-b"`) {
		t.Errorf("feat-b after feat-a's removal: %q", got)
	}
}

// TestWindowsMultiLineRefused: a multi-line command is refused before
// anything runs (cmd.exe would run its first line and report success).
func TestWindowsMultiLineRefused(t *testing.T) {
	e := newWindowsEnv(t, `
[project]
name = "lines"
port_range = PORTRANGE

[services.job]
cmd = """
binky-demo-app check --url http://127.0.0.1:1
cmd /c exit 0"""
`)
	r := e.binky("up", "one")
	if r.code == 0 || !strings.Contains(r.stderr, "has 2 lines: cmd.exe runs only the first") {
		t.Errorf("up of a multi-line command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := e.binky("check")
	if c.code != 1 || !strings.Contains(c.stdout, "binky.toml:7: error: services.job.cmd has 2 lines") {
		t.Errorf("check of a multi-line command: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
}
