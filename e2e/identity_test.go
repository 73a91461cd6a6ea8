//go:build linux

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// A world belongs to one repository, one home and one user (issue 24).
// These tests are the three reproductions of that issue: a bare worktree
// name that reached another project's world, two homes with one project
// name that ended each other's processes and shared a database, and two
// homes whose port blocks overlapped.

// identityWorld is a project with a slice and a server that says whose
// world it is: the worktree and the home ("${env.BINKY_HOME}" is the
// caller's, so each home's worlds answer with their own).
const identityWorld = `
[project]
name = "NAME"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "binky-demo-app migrate --db '${self.url}'"

[services.api]
cmd        = "binky-demo-app serve --db '${db.url}' --name '${worktree.name}@${env.BINKY_HOME}'"
url        = "api"
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[agents]
expose = ["api", "db"]
`

// addRepo makes a second repository beside e's, in the same home, holding
// config (rendered with e's range and this run's tag: render), and returns
// its directory.
func (e *env) addRepo(name, config string) string {
	e.t.Helper()
	dir := filepath.Join(filepath.Dir(e.repo), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "binky.toml"), []byte(e.render(config)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.gitIn(dir, "init", "-q", "-b", "main")
	e.gitIn(dir, "add", "-A")
	e.gitIn(dir, "commit", "-q", "-m", "init")
	return dir
}

// apiSays is what the world's own api server answers on its direct port.
func apiSays(t *testing.T, port int) string {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Repro 1: standing in repository r1 (project p1, no world x), a bare x
// reached project p0's world x in another repository. Now it resolves in
// the caller's project only; --project reaches another; outside any
// repository a name in one project works and one in several is refused
// with the candidates.
func TestBareNameStaysInCallersProject(t *testing.T) {
	e := newEnv(t, strings.Replace(identityWorld, "NAME", "p0", 1))
	p0, p1 := e.project, runName("p1")
	e.must("up", "-q", "x")
	before := e.status().world(t, "x")
	api := before.service(t, "api")
	r1 := e.addRepo("r1", strings.Replace(identityWorld, "NAME", "p1", 1))

	for _, verb := range [][]string{{"remove", "--force", "x"}, {"reset", "x"}, {"down", "x"}, {"env", "x"}, {"verify", "x"}, {"logs", "x"}} {
		r := e.binkyIn(r1, verb...)
		if r.code == 0 {
			t.Errorf("binky %s in p1's repository succeeded on p0's world:\n%s", strings.Join(verb, " "), r.stdout)
			continue
		}
		for _, want := range []string{`project "` + p1 + `"`, p0 + "/x", "--project"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("binky %s in p1's repository: the refusal does not say %q:\n%s", strings.Join(verb, " "), want, r.stderr)
			}
		}
	}
	after := e.status().world(t, "x")
	if after.State != "up" || after.service(t, "api").Pid != api.Pid || !alive(api.Pid) {
		t.Fatalf("p0's world after p1's verbs: %s, api pid %d (was %d); want up and untouched", after.State, after.service(t, "api").Pid, api.Pid)
	}
	if _, err := os.Stat(after.Path); err != nil {
		t.Fatalf("p0's worktree is gone: %v", err)
	}
	if got := apiSays(t, api.Port); !strings.Contains(got, `"x@`) {
		t.Fatalf("p0's api answers %q", got)
	}

	// --project names another project on purpose.
	if r := e.binkyIn(r1, "env", "--project", p0, "x"); r.code != 0 || !strings.Contains(r.stdout, "api") {
		t.Errorf("env --project p0 x in p1's repository: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Outside any repository: one project has x.
	outside := t.TempDir()
	if r := e.binkyIn(outside, "env", "x"); r.code != 0 {
		t.Errorf("env x outside any repository, one project has it: exit %d\n%s", r.code, r.stderr)
	}
	// Now p1 has an x too: outside, x is ambiguous and both are named.
	e.binkyIn(r1, "up", "-q", "x")
	r := e.binkyIn(outside, "remove", "--force", "x")
	if r.code == 0 {
		t.Fatalf("remove x outside any repository with x in two projects succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{p0 + "/x", p1 + "/x", "--project"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ambiguous x: the refusal does not list %q:\n%s", want, r.stderr)
		}
	}
	st := e.status()
	n := 0
	for _, w := range st.Worlds {
		if w.Worktree == "x" && w.State == "up" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d worlds named x are up after the refused remove; want 2: %+v", n, st.Worlds)
	}
	// In p1's repository, x is p1's.
	if r := e.binkyIn(r1, "down", "x"); r.code != 0 {
		t.Fatalf("down x in p1's repository: %s", r.stderr)
	}
	if !alive(api.Pid) {
		t.Errorf("down x in p1's repository ended p0's api (pid %d)", api.Pid)
	}

	// MCP: the env tool in p1's repository does not reach p0's x either.
	mc := (&env{t: t, home: e.home, repo: r1, rng: e.rng, leases: e.leases}).startMCP()
	res := mc.call("down", map[string]any{"worktree": "x", "project": p0}, "")
	if res.isError {
		t.Errorf("MCP down of p0's x with project p0: %s", res.summary)
	}
	if alive(api.Pid) {
		t.Errorf("MCP down with project p0 left p0's api running (pid %d): %s %s", api.Pid, res.summary, res.json)
	}
	e.binkyIn(r1, "remove", "--force", "-q", "x")
	res = mc.call("env", map[string]any{"worktree": "x"}, "")
	if !res.isError || !strings.Contains(res.summary, p0+"/x") {
		t.Errorf("MCP env x in p1's repository (p1 has no x): error %v, %q; want a refusal naming p0/x", res.isError, res.summary)
	}
}

// twoHomes makes two homes, each with its own repository of project name
// (the same in both), sharing one port range and one port lease store.
func twoHomes(t *testing.T, config string) (a, b *env) {
	a = newEnv(t, config)
	b = newEnv(t, a.render(config))
	b.leases, b.rng = a.leases, a.rng
	return a, b
}

// Repro 2 and 3: two homes run project "twin" with the same worktree
// names from the same port range, ten ups at once. No port is held by two
// worlds, every world's own server answers on its port, and one home's
// down and remove never reach the other's processes, slices or files.
func TestTwoHomesOneProjectNameStayApart(t *testing.T) {
	a, b := twoHomes(t, strings.Replace(identityWorld, "NAME", "twin", 1))
	branches := []string{"w1", "w2", "w3", "w4", "w5"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for _, e := range []*env{a, b} {
		for _, br := range branches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.binky("up", "-q", br); r.code != 0 {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s up %s: exit %d: %s", e.home, br, r.code, r.stderr))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("ups failed:\n%s\ndaemon a:\n%s\ndaemon b:\n%s", strings.Join(failed, "\n"), a.daemonLog(), b.daemonLog())
	}

	type held struct{ home, world string }
	byPort := map[int]held{}
	pidsOf := map[*env]map[string]int{}
	for _, e := range []*env{a, b} {
		pidsOf[e] = map[string]int{}
		st := e.status()
		if len(st.Worlds) != len(branches) {
			t.Fatalf("home %s has %d worlds; want %d", e.home, len(st.Worlds), len(branches))
		}
		for _, w := range st.Worlds {
			if w.State != "up" {
				t.Errorf("%s %s is %s; want up", e.home, w.Worktree, w.State)
			}
			for p := w.Ports[0]; p <= w.Ports[1] && p > 0; p++ {
				if h, ok := byPort[p]; ok {
					t.Errorf("port %d is in the blocks of %s/%s and %s/%s", p, h.home, h.world, e.home, w.Worktree)
				}
				byPort[p] = held{e.home, w.Worktree}
			}
			api := w.service(t, "api")
			pidsOf[e][w.Worktree] = api.Pid
			// The server that answers is this world's own.
			if got, want := apiSays(t, api.Port), `"`+w.Worktree+"@"+e.home+`"`; !strings.Contains(got, want) {
				t.Errorf("%s %s: its port %d answers %q; want its own server (%s)", e.home, w.Worktree, api.Port, got, want)
			}
		}
	}
	markedA := len(marked(a, ""))
	if markedA == 0 {
		t.Fatal("no process of home a carries its marker")
	}
	slicesA, _ := filepath.Glob(filepath.Join(a.home, "data", "sqlite", "*", "*"))

	// Home a's down of w1 ends its own w1 only.
	a.must("down", "-q", "w1")
	if !alive(pidsOf[b]["w1"]) {
		t.Errorf("home a's down w1 ended home b's w1 api (pid %d)", pidsOf[b]["w1"])
	}
	a.must("up", "-q", "w1")
	pidsOf[a]["w1"] = a.status().world(t, "w1").service(t, "api").Pid

	// Home b removes every world it has: home a keeps all of its own.
	for _, br := range branches {
		b.must("remove", "--force", "-q", br)
	}
	st := a.status()
	for _, w := range st.Worlds {
		api := w.service(t, "api")
		if w.State != "up" || api.Pid != pidsOf[a][w.Worktree] || !alive(api.Pid) {
			t.Errorf("home a's %s after home b's removes: %s, api pid %d (was %d, alive %v)", w.Worktree, w.State, api.Pid, pidsOf[a][w.Worktree], alive(api.Pid))
		}
		if got := apiSays(t, api.Port); !strings.Contains(got, "@"+a.home) {
			t.Errorf("home a's %s answers %q after home b's removes", w.Worktree, got)
		}
		if _, err := os.Stat(w.Path); err != nil {
			t.Errorf("home a's worktree %s is gone: %v", w.Path, err)
		}
	}
	if n := len(marked(a, "")); n != markedA {
		t.Errorf("home a runs %d marked processes after home b's removes; %d before", n, markedA)
	}
	after, _ := filepath.Glob(filepath.Join(a.home, "data", "sqlite", "*", "*"))
	sort.Strings(slicesA)
	sort.Strings(after)
	if strings.Join(after, "\n") != strings.Join(slicesA, "\n") {
		t.Errorf("home a's slices changed with home b's removes:\nbefore %v\nafter  %v", slicesA, after)
	}
	if n := len(marked(b, "")); n != 0 {
		t.Errorf("home b left %d marked processes after removing every world", n)
	}
	// Each user's leases are in a subdirectory of their own (host/ports).
	leases, _ := filepath.Glob(filepath.Join(a.leases, "*", "block-*.json"))
	var bLeases []string
	for _, l := range leases {
		if strings.Contains(read(l), b.home) {
			bLeases = append(bLeases, l)
		}
	}
	if len(bLeases) > 0 {
		t.Errorf("home b's leases outlive its removed worlds: %v", bLeases)
	}
	if len(leases)-len(bLeases) < len(st.Worlds) {
		t.Errorf("lease files %v; want one for each of home a's %d worlds", leases, len(st.Worlds))
	}
}

// Repro 2 on a shared server: two homes with one project name map the
// same worktree to the same PostgreSQL database name. The second home is
// refused with the owner named, never shares the data, and its remove
// does not drop the first home's database.
func TestTwoHomesPostgresSliceIsClaimed(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	project := runName("twinpg")
	config := `
[project]
name = "` + project + `"
port_range = PORTRANGE

[services.db]
adapter   = "postgres"
admin_url = "` + e2ePostgres + `"
migrate   = "psql -qX -v ON_ERROR_STOP=1 '${self.url}' -c 'CREATE TABLE IF NOT EXISTS marks (who text)'"
`
	a, b := twoHomes(t, config)
	a.must("up", "-q", "shared")
	psql := func(url, sql string) string {
		out, err := exec.Command("psql", "-qXAt", url, "-c", sql).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %q: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	dbName := psql(e2ePostgres, "SELECT datname FROM pg_database WHERE datname LIKE '"+project+"%shared%'")
	if dbName == "" {
		t.Fatal("home a's database is not on the server")
	}
	if out, err := exec.Command("psql", "-qXAt", strings.TrimSuffix(e2ePostgres, "postgres")+dbName, "-c", "INSERT INTO marks VALUES ('a')").CombinedOutput(); err != nil {
		t.Fatalf("write into home a's database: %v\n%s", err, out)
	}

	r := b.binky("up", "shared")
	if r.code == 0 {
		t.Fatalf("home b's up of the same project and worktree succeeded; it must be refused:\n%s", r.stdout)
	}
	homeA := homeIDOf(a.home)
	for _, want := range []string{"another binky home", homeA, a.home} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("home b's refusal does not name %q:\n%s", want, r.stderr)
		}
	}
	// Home b's record of the slice it never made: remove --force forgets
	// it and says whose it is — another home's, in use — never to drop it.
	r = b.binky("remove", "--force", "-q", "shared")
	if r.code != 0 {
		t.Errorf("home b's remove --force of its failed world: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"belongs to another binky home", homeA, a.home, "in use by it", "binky left it alone"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("home b's remove --force does not say %q of home a's database:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "by hand") {
		t.Errorf("home b's remove --force tells the user to drop home a's live database by hand:\n%s", r.stderr)
	}
	if got := psql(e2ePostgres, "SELECT count(*) FROM pg_database WHERE datname = '"+dbName+"'"); got != "1" {
		t.Fatalf("home a's database %s is gone after home b's up and remove", dbName)
	}
	if got := psql(strings.TrimSuffix(e2ePostgres, "postgres")+dbName, "SELECT string_agg(who, ',') FROM marks"); got != "a" {
		t.Errorf("home a's rows are %q after home b's attempts; want a", got)
	}
	a.must("remove", "--force", "-q", "shared")
	if got := psql(e2ePostgres, "SELECT count(*) FROM pg_database WHERE datname = '"+dbName+"'"); got != "0" {
		t.Errorf("home a's remove left its database %s", dbName)
	}
}
