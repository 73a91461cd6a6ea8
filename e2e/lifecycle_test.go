package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

const demoConfig = `
[project]
name = "demo"
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
cmd = "exec sleep 600"

[agents]
expose = ["api", "db"]
`

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

func TestTwoWorldsSideBySide(t *testing.T) {
	e := newEnv(t, demoConfig)
	e.must("up", "feat/a")
	e.must("up", "feat/b")

	st := e.status()
	if len(st.Worlds) != 2 {
		t.Fatalf("got %d worlds; want 2: %+v", len(st.Worlds), st)
	}
	a, b := st.Worlds[0], st.Worlds[1]
	for _, w := range []worldJSON{a, b} {
		if w.State != "up" {
			t.Errorf("world %s: state %q; want up", w.Worktree, w.State)
		}
		if w.Ports[0] < e.rng[0] || w.Ports[1] > e.rng[1] {
			t.Errorf("world %s: ports %v outside the project range %v", w.Worktree, w.Ports, e.rng)
		}
	}
	if a.Ports[0] <= b.Ports[1] && b.Ports[0] <= a.Ports[1] {
		t.Errorf("port blocks overlap: %v and %v", a.Ports, b.Ports)
	}
	if a.service(t, "db").Address == b.service(t, "db").Address {
		t.Errorf("both worlds share the slice %s", a.service(t, "db").Address)
	}

	// Each world's API counts visits in its own slice: seeded row + visits.
	apiA := fmt.Sprintf("http://127.0.0.1:%d/", a.service(t, "api").Port)
	apiB := fmt.Sprintf("http://127.0.0.1:%d/", b.service(t, "api").Port)
	get(t, apiA)
	get(t, apiA)
	if got := get(t, apiA); !strings.Contains(got, "4 visits") {
		t.Errorf("world a after 3 visits: %q; want 4 visits (1 seeded)", got)
	}
	if got := get(t, apiB); !strings.Contains(got, "2 visits") {
		t.Errorf("world b after 1 visit: %q; want 2 visits (independent slice)", got)
	}

	// Through the proxy, by name: each world's api answers at its hostname.
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	for _, w := range []worldJSON{a, b} {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
		req.Host = "api." + w.Worktree + "." + e.project + ".localhost"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("through the proxy: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `world "`+w.Worktree+`"`) {
			t.Errorf("proxy %s: %s %q", req.Host, resp.Status, body)
		}
	}

	// env prints exactly the exposed services.
	var env map[string]string
	if err := json.Unmarshal([]byte(e.must("env", "feat/a").stdout), &env); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "api,db" {
		t.Errorf("env keys %v; want [api db]", keys)
	}
	if !strings.Contains(env["api"], "api."+a.Worktree+"."+e.project+".localhost") {
		t.Errorf("env api = %q; want the proxied URL", env["api"])
	}
	dot := e.must("env", "feat/a", "--dotenv").stdout
	if !strings.Contains(dot, "BINKY_API_URL='") || !strings.Contains(dot, "BINKY_DB_URL='") || strings.Contains(dot, "WORKER") {
		t.Errorf("env --dotenv:\n%s", dot)
	}

	// up again is a no-op; down keeps slices; up after down provisions nothing.
	if out := e.must("up", "feat/a").stdout; !strings.Contains(out, "already up") {
		t.Errorf("second up: %q; want a no-op report", out)
	}
	e.must("down", "feat/a")
	st = e.status()
	for _, s := range st.world(t, a.Worktree).Services {
		if s.Kind == "cmd" && (s.State == "running" || s.Pid != 0) {
			t.Errorf("after down, %s is %s pid %d", s.Name, s.State, s.Pid)
		}
	}
	e.must("up", "feat/a")
	if got := get(t, apiA); !strings.Contains(got, "6 visits") {
		t.Errorf("after down+up: %q; want the same slice (6 visits: 4 direct, 1 proxied, this one)", got)
	}
	if n := countEvents(t, e, "slice_provisioned", a.Worktree); n != 1 {
		t.Errorf("slice_provisioned for %s: %d events; want 1", a.Worktree, n)
	}
}

func countEvents(t *testing.T, e *env, name, worktree string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.home, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct{ Event, Worktree string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == name && ev.Worktree == worktree {
			n++
		}
	}
	return n
}

func TestDependsOnOrder(t *testing.T) {
	e := newEnv(t, `
[project]
name = "order"
port_range = PORTRANGE

[services.c]
cmd = "echo c >> ${worktree.path}/order.log; exec sleep 600"
depends_on = ["b"]

[services.b]
cmd = "sleep 0.3; echo b >> ${worktree.path}/order.log; exec sleep 600"
depends_on = ["a"]
health = { exec = "grep -q b ${worktree.path}/order.log" }

[services.a]
cmd = "sleep 0.3; echo a >> ${worktree.path}/order.log; exec sleep 600"
health = { exec = "grep -q a ${worktree.path}/order.log" }
`)
	e.must("up", "ordered")
	w := e.status().world(t, "ordered")
	// c has no health check: up answers once it is started, which may be
	// before its shell wrote its line (seen beside a second make test).
	log := filepath.Join(w.Path, "order.log")
	waitFor(t, "c's line in order.log", func() bool { return len(strings.Fields(read(log))) >= 3 })
	if got := strings.Fields(read(log)); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("start order %v; want a,b,c", got)
	}
}

func TestFailingHealthCheckReportsLogTail(t *testing.T) {
	e := newEnv(t, `
[project]
name = "sick"
port_range = PORTRANGE

[services.api]
cmd = "echo booting; echo cannot open config file; exec sleep 600"
ports = ["http"]
health = { http = "http://127.0.0.1:${self.port}/healthz", timeout = "2s", interval = "100ms" }
`)
	r := e.binky("up", "sick")
	if r.code == 0 {
		t.Fatalf("up with a failing health check exited 0")
	}
	for _, want := range []string{"api", "/healthz", "cannot open config file"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("error does not mention %q:\n%s", want, r.stderr)
		}
	}
}

func TestRemoveRefusesDirtyWorktree(t *testing.T) {
	e := newEnv(t, `
[project]
name = "dirty"
port_range = PORTRANGE

[services.idle]
cmd = "exec sleep 600"
`)
	e.must("up", "wip")
	w := e.status().world(t, "wip")
	if err := os.WriteFile(filepath.Join(w.Path, "notes.txt"), []byte("unsaved"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.binky("remove", "wip")
	if r.code == 0 || !strings.Contains(r.stderr, "notes.txt") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("remove of a dirty worktree: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(w.Path); err != nil {
		t.Fatalf("refused remove still touched the worktree: %v", err)
	}
	e.must("remove", "--force", "wip")
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Errorf("worktree %s still exists after remove --force", w.Path)
	}
	if len(e.status().Worlds) != 0 {
		t.Errorf("world still listed after remove")
	}
	if _, err := os.Stat(filepath.Join(e.home, "logs", e.project, "wip")); !os.IsNotExist(err) {
		t.Errorf("logs of the removed world remain")
	}
}

func TestDaemonRestartKeepsRegistry(t *testing.T) {
	e := newEnv(t, `
[project]
name = "keep"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["http"]
`)
	e.must("up", "one")
	before := e.status().world(t, "one")
	if r := e.must("daemon", "stop"); !strings.Contains(r.stdout, "1 world keeps running") {
		t.Errorf("daemon stop with one world up said %q; want that 1 world keeps running", r.stdout)
	}
	if r := e.binky("daemon", "status"); r.code == 0 {
		t.Fatalf("daemon status after stop exited 0: %s", r.stdout)
	}
	e.must("daemon", "start")
	after := e.status().world(t, "one")
	if after.Ports != before.Ports || after.State != before.State {
		t.Errorf("after restart: ports %v state %s; before: %v %s", after.Ports, after.State, before.Ports, before.State)
	}
	if pb, pa := before.service(t, "web").Pid, after.service(t, "web").Pid; pb != pa || pa == 0 {
		t.Errorf("web pid before %d, after %d; want the same process re-adopted", pb, pa)
	}
	// With the world down, no world is said to keep running.
	e.must("down", "one")
	if r := e.must("daemon", "stop"); strings.Contains(r.stdout, "keep") || !strings.Contains(r.stdout, "no world had a process running") {
		t.Errorf("daemon stop with every world down said %q", r.stdout)
	}
}

func TestConcurrentUpsNeverOverlap(t *testing.T) {
	e := newEnv(t, `
[project]
name = "swarm"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["http", "debug"]
`)
	e.must("daemon", "start")
	const n = 20
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.binky("up", "-q", fmt.Sprintf("agent/%02d", i))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("up agent/%02d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	st := e.status()
	if len(st.Worlds) != n {
		t.Fatalf("got %d worlds; want %d", len(st.Worlds), n)
	}
	seen := map[int]string{}
	for _, w := range st.Worlds {
		for p := w.Ports[0]; p <= w.Ports[1]; p++ {
			if other, dup := seen[p]; dup {
				t.Errorf("port %d given to %s and %s", p, other, w.Worktree)
			}
			seen[p] = w.Worktree
		}
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, `
[project]
name = "bad"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["a", "b"]
`)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown worktree", []string{"env", "no-such-world"}, "no world named"},
		{"branch git rejects", []string{"up", "bad..branch"}, "bad..branch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.binky(c.args...)
			if r.code == 0 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("binky %v: exit %d, stderr %q; want non-zero and %q", c.args, r.code, r.stderr, c.want)
			}
			if n := strings.Count(r.stderr, "binky:"); n != 1 {
				t.Errorf("binky %v: %d error lines; want one:\n%s", c.args, n, r.stderr)
			}
		})
	}

	t.Run("config errors", func(t *testing.T) {
		os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte("[project]\nname = \"bad\"\n[services.web]\ncmd = \"x\"\nadapter = \"sqlite\"\n"), 0o644)
		defer e.git("checkout", "binky.toml")
		check := e.binky("check")
		up := e.binky("up")
		if up.code == 0 || check.code != 1 {
			t.Fatalf("check exit %d, up exit %d; want 1 and non-zero", check.code, up.code)
		}
		first := strings.SplitN(strings.TrimSpace(check.stdout), "\n", 2)[0]
		if first == "" || !strings.Contains(up.stderr, first) {
			t.Errorf("up does not print check's message %q:\n%s", first, up.stderr)
		}
	})

	t.Run("exhausted port range", func(t *testing.T) {
		lo := nextRange(1)[0]
		cfg := fmt.Sprintf("[project]\nname = \"tight\"\nport_range = [%d, %d]\n[services.web]\ncmd = \"exec sleep 600\"\nports = [\"a\", \"b\"]\n", lo, lo+1)
		e2 := newEnv(t, cfg)
		e2.must("up", "first")
		r := e2.binky("up", "second")
		if r.code == 0 || !strings.Contains(r.stderr, fmt.Sprint(lo)) {
			t.Errorf("up into a full range: exit %d\n%s", r.code, r.stderr)
		}
	})
	_ = time.Second
}

// TestUpWhereYouStand: up with no branch means the worktree you stand in,
// here the main one; removing that world keeps the repository.
func TestUpWhereYouStand(t *testing.T) {
	e := newEnv(t, `
[project]
name = "here"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["http"]
`)
	e.must("up", "-q")
	w := e.status().world(t, "main")
	if w.Path != e.repo || w.Branch != "main" {
		t.Errorf("up with no branch: world at %s on %s; want %s on main", w.Path, w.Branch, e.repo)
	}
	e.must("remove", "main")
	if _, err := os.Stat(filepath.Join(e.repo, "binky.toml")); err != nil {
		t.Errorf("removing the main worktree's world touched the repository: %v", err)
	}
}
