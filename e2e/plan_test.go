//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// up converges a running world on an edited binky.toml (issue 26): only
// what changed and what depends on it restarts; a service added starts, one
// removed stops; --dry-run says so first and changes nothing.

const planWorldBase = `
[project]
name = "plan"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"

[services.api]
cmd        = "exec sleep 100601"
depends_on = ["db"]
ports      = ["http"]

[services.worker]
cmd        = "exec sleep 100602"
depends_on = ["api"]

[services.side]
cmd = "exec sleep 100603"
`

// editWorld rewrites the world's own binky.toml (the one up reads for it).
func editWorld(t *testing.T, e *env, path, config string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(path, "binky.toml"), []byte(e.render(config)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func pidsOf(t *testing.T, e *env, wt string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range e.status().world(t, wt).Services {
		if s.Kind == "cmd" {
			out[s.Name] = s.Pid
		}
	}
	return out
}

func TestUpConvergesOnEditedConfig(t *testing.T) {
	e := newEnv(t, planWorldBase)
	e.must("up", "-q", "w")
	path := e.status().world(t, "w").Path
	before := pidsOf(t, e, "w")

	// Nothing changed: nothing to do, nothing restarts.
	if out := e.must("up", "w").stdout; !strings.Contains(out, "nothing to do") {
		t.Errorf("up of an unchanged world:\n%s", out)
	}

	// api's command changes: api and worker (which depends on it) restart,
	// side does not. --dry-run says so and changes nothing.
	edited := strings.Replace(planWorldBase, "exec sleep 100601", "exec sleep 100611", 1)
	editWorld(t, e, path, edited)
	dry := e.must("up", "--dry-run", "w").stdout
	for _, want := range []string{"restart   api: its config changed", "restart   worker: it depends on api"} {
		if !strings.Contains(dry, want) {
			t.Errorf("--dry-run does not say %q:\n%s", want, dry)
		}
	}
	if strings.Contains(dry, "side") {
		t.Errorf("--dry-run would touch side:\n%s", dry)
	}
	if got := pidsOf(t, e, "w"); got["api"] != before["api"] {
		t.Fatalf("--dry-run restarted api (%d → %d)", before["api"], got["api"])
	}
	var j struct {
		Plan struct {
			Restart []struct{ Service string } `json:"restart"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(e.must("up", "--dry-run", "--json", "w").stdout), &j); err != nil || len(j.Plan.Restart) != 2 {
		t.Errorf("up --dry-run --json: %+v, %v; want two restarts", j, err)
	}
	e.must("up", "-q", "w")
	after := pidsOf(t, e, "w")
	if after["api"] == before["api"] || after["worker"] == before["worker"] {
		t.Errorf("api or worker not restarted: before %v, after %v", before, after)
	}
	if after["side"] != before["side"] {
		t.Errorf("side restarted though nothing of it changed: before %v, after %v", before, after)
	}
	for _, p := range after {
		if !alive(p) {
			t.Errorf("pid %d is not running after up", p)
		}
	}

	// side removed: stopped and gone from status; mail added: started;
	// nothing else restarts. The slice of a removed adapter service stays.
	edited = strings.Replace(edited, `[services.side]
cmd = "exec sleep 100603"`, `[services.mail]
cmd = "exec sleep 100604"`, 1)
	editWorld(t, e, path, edited)
	e.must("up", "-q", "w")
	final := pidsOf(t, e, "w")
	if _, ok := final["side"]; ok || alive(after["side"]) {
		t.Errorf("side removed from binky.toml still runs or is listed: %v (pid %d alive %v)", final, after["side"], alive(after["side"]))
	}
	if final["mail"] == 0 || !alive(final["mail"]) {
		t.Errorf("mail added to binky.toml does not run: %v", final)
	}
	if final["api"] != after["api"] || final["worker"] != after["worker"] {
		t.Errorf("api or worker restarted by an unrelated change: before %v, after %v", after, final)
	}
}

// binky restart restarts the named service only, or every cmd service in
// dependency order, each waited healthy.
func TestRestartVerb(t *testing.T) {
	e := newEnv(t, planWorldBase)
	e.must("up", "-q", "w")
	before := pidsOf(t, e, "w")
	e.must("restart", "-q", "w", "side")
	after := pidsOf(t, e, "w")
	if after["side"] == before["side"] || !alive(after["side"]) {
		t.Errorf("side not restarted: %v → %v", before, after)
	}
	if after["api"] != before["api"] || after["worker"] != before["worker"] {
		t.Errorf("restart of side restarted others: %v → %v", before, after)
	}
	e.must("restart", "-q", "w")
	all := pidsOf(t, e, "w")
	for name, p := range all {
		if p == after[name] || !alive(p) {
			t.Errorf("restart of every service: %s pid %d (was %d)", name, p, after[name])
		}
	}
	if r := e.binky("restart", "w", "db"); r.code == 0 || !strings.Contains(r.stderr, "no cmd service") {
		t.Errorf("restart of an adapter service: exit %d\n%s", r.code, r.stderr)
	}
}

// applyWorld's api can be held unhealthy ($HOLD/hold-health), so a test
// kills the daemon while an apply waits for it, with no timing involved.
const applyWorld = `
[project]
name = "apply"
port_range = PORTRANGE

[services.api]
cmd    = "exec sleep 100801"
health = { exec = '''if [ -f "$HOLD/hold-health" ]; then touch "$HOLD/in-health"; exit 1; fi''' }

[services.worker]
cmd        = "exec sleep 100802"
depends_on = ["api"]
`

// A kill -9 while up applies an edited binky.toml (the new api started,
// its health awaited, worker not restarted yet) converges on the next up:
// one api process, running the new command; worker running again; and
// the up after that has nothing to do.
func TestApplyKilledMidwayConverges(t *testing.T) {
	e, hold := holdEnv(t, applyWorld)
	e.must("up", "-q", "w")
	path := e.status().world(t, "w").Path
	before := pidsOf(t, e, "w")

	editWorld(t, e, path, strings.Replace(applyWorld, "exec sleep 100801", "exec sleep 100811", 1))
	os.WriteFile(filepath.Join(hold, "hold-health"), nil, 0o644)
	done := make(chan result, 1)
	go func() { done <- e.binky("up", "-q", "w") }()
	waitForFile(t, e, filepath.Join(hold, "in-health"))
	kill9Daemon(t, e)
	if r := <-done; r.code == 0 {
		t.Fatal("up answered ok though its daemon was killed mid-apply")
	}

	os.Remove(filepath.Join(hold, "hold-health"))
	r := e.must("up", "w")
	if strings.Contains(r.stdout, "nothing to do") {
		t.Fatalf("up after a killed apply did nothing:\n%s", r.stdout)
	}
	st := e.status().world(t, "w")
	if st.State != "up" {
		t.Fatalf("world %s after the second up; want up", st.State)
	}
	api, worker := marked(e, "w/api"), marked(e, "w/worker")
	if len(api) != 1 || len(worker) != 1 {
		t.Fatalf("processes after the second up: api %v, worker %v; want exactly one each", api, worker)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", api[0]))
	if !strings.Contains(string(cmdline), "100811") {
		t.Errorf("api runs %q; want the edited command (sleep 100811)", cmdline)
	}
	if alive(before["api"]) {
		t.Errorf("the old api (pid %d) still runs", before["api"])
	}
	if w := st.service(t, "worker"); w.State != "running" || !alive(w.Pid) {
		t.Errorf("worker after the second up: %s pid %d", w.State, w.Pid)
	}
	if out := e.must("up", "w").stdout; !strings.Contains(out, "nothing to do") {
		t.Errorf("a third up found more to do:\n%s", out)
	}
}

// An edit of a service's env restarts that service (and what depends on
// it) only; an edit of its ports likewise.
func TestUpRestartsOnEnvAndPortEdits(t *testing.T) {
	base := strings.Replace(planWorldBase, `[services.side]
cmd = "exec sleep 100603"`, `[services.side]
cmd = "exec sleep 100603"
env = { MODE = "a" }`, 1)
	e := newEnv(t, base)
	e.must("up", "-q", "w")
	path := e.status().world(t, "w").Path
	before := pidsOf(t, e, "w")

	edited := strings.Replace(base, `MODE = "a"`, `MODE = "b"`, 1)
	editWorld(t, e, path, edited)
	e.must("up", "-q", "w")
	after := pidsOf(t, e, "w")
	if after["side"] == before["side"] || !alive(after["side"]) {
		t.Errorf("side's env changed but it was not restarted: %v → %v", before, after)
	}
	if after["api"] != before["api"] || after["worker"] != before["worker"] {
		t.Errorf("an env edit of side restarted others: %v → %v", before, after)
	}
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", after["side"]))
	if !strings.Contains("\x00"+string(env), "\x00MODE=b\x00") {
		t.Errorf("side does not run with the edited env")
	}

	edited = strings.Replace(edited, `ports      = ["http"]`, `ports      = ["http", "admin"]`, 1)
	editWorld(t, e, path, edited)
	e.must("up", "-q", "w")
	final := pidsOf(t, e, "w")
	if final["api"] == after["api"] || final["worker"] == after["worker"] {
		t.Errorf("api's ports changed but api or its dependent worker was not restarted: %v → %v", after, final)
	}
	if final["side"] != after["side"] {
		t.Errorf("a port edit of api restarted side: %v → %v", after, final)
	}
	if ports := e.status().world(t, "w").service(t, "api").Ports; len(ports) != 2 {
		t.Errorf("api's ports after the edit: %v; want http and admin", ports)
	}
}

// An added service takes new ports and starts alone: the running ones keep
// their process and their ports, and status, env and the proxy point at
// what listens (issue 39, repro 1: the block moved and stranded them).
func TestUpAddedServiceKeepsPortsAndProxy(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	const served = `
[project]
name = "grow"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url    = "web"
health = "http://127.0.0.1:${self.port}/"

[services.side]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
ports  = ["http"]
health = "http://127.0.0.1:${self.port}/"
`
	e := newEnv(t, served)
	e.must("up", "-q", "w")
	path := e.status().world(t, "w").Path
	before, ports := pidsOf(t, e, "w"), portsOf(t, e, "w")

	editWorld(t, e, path, served+`
[services.mail]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
ports  = ["smtp"]
health = "http://127.0.0.1:${self.port}/"
`)
	dry := e.must("up", "--dry-run", "w").stdout
	if !strings.Contains(dry, "start     mail: new in binky.toml") || strings.Contains(dry, "restart") {
		t.Errorf("up --dry-run:\n%s\nwant mail started and nothing restarted", dry)
	}
	e.must("up", "-q", "w")
	after, now := pidsOf(t, e, "w"), portsOf(t, e, "w")
	for _, name := range []string{"web", "side"} {
		if after[name] != before[name] || now[name] != ports[name] {
			t.Errorf("%s: pid %d → %d, port %d → %d; want both kept", name, before[name], after[name], ports[name], now[name])
		}
	}
	// Each recorded port answers, and env hands out those ports.
	for name, p := range now {
		if p == 0 {
			t.Errorf("%s has no port recorded", name)
			continue
		}
		if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/", p)); err != nil {
			t.Errorf("%s's recorded port %d does not answer: %v", name, p, err)
		} else {
			resp.Body.Close()
		}
	}
	var env struct {
		Direct map[string]string `json:"direct"`
	}
	if err := json.Unmarshal([]byte(e.must("env", "--json", "w").stdout), &env); err == nil && env.Direct["web"] != "" {
		if want := fmt.Sprintf("http://127.0.0.1:%d", now["web"]); env.Direct["web"] != want {
			t.Errorf("env says web is at %s; it listens at %s", env.Direct["web"], want)
		}
	}
	// The proxy reaches web where it listens.
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
	rq.Host = "web.w." + e.project + ".localhost"
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(rq)
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the proxy answered %d for web; want 200 from where it listens", resp.StatusCode)
	}
}

// portsOf maps each cmd service of a world to its first port, as status
// has it.
func portsOf(t *testing.T, e *env, wt string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range e.status().world(t, wt).Services {
		if s.Kind == "cmd" {
			out[s.Name] = s.Port
		}
	}
	return out
}
