package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

// migrateScript applies every .sql file under db/migrations of the
// worktree it runs in to the slice at $1, through sqlite3 or psql.
const migrateScript = `#!/bin/sh
set -e
url="$1"
for f in $(find db/migrations -name '*.sql' | sort); do
  case "$url" in
    sqlite://*) sqlite3 "${url#sqlite://}" < "$f" ;;
    *) psql -qX -v ON_ERROR_STOP=1 "$url" -f "$f" ;;
  esac
done
`

// inputsBackend is what the inputs test needs to know of one adapter.
type inputsBackend struct {
	adapter, admin string
	// hasTable reports whether the slice at url has table.
	hasTable func(t *testing.T, url, table string) bool
	// exists reports whether the template named name exists on the backend.
	exists func(e *env, project, name string) bool
	// cleanup drops whatever templates of project a failed test left.
	cleanup func(project string)
}

// TestGoldenInputsSQLite: see testGoldenInputs.
func TestGoldenInputsSQLite(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	if _, err := exec.LookPath("sqlite3"); err != nil {
		adaptertest.MissingServer(t, "the sqlite3 command is not on PATH; install it: apt-get install sqlite3")
	}
	testGoldenInputs(t, inputsBackend{
		adapter: "sqlite",
		hasTable: func(t *testing.T, url, table string) bool {
			out, err := exec.Command("sqlite3", strings.TrimPrefix(url, "sqlite://"), "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='"+table+"'").CombinedOutput()
			if err != nil {
				t.Fatalf("query %s: %v\n%s", url, err, out)
			}
			return strings.TrimSpace(string(out)) == "1"
		},
		exists: func(e *env, project, name string) bool {
			_, err := os.Stat(filepath.Join(e.home, "data", "sqlite", project, name+".db"))
			return err == nil
		},
		cleanup: func(string) {},
	})
}

// TestGoldenInputsPostgres: see testGoldenInputs.
func TestGoldenInputsPostgres(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	const admin = "postgres://postgres@127.0.0.1:5432/postgres"
	psql := func(url, sql string) (string, error) {
		out, err := exec.Command("psql", "-qXAt", url, "-c", sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	testGoldenInputs(t, inputsBackend{
		adapter: "postgres", admin: admin,
		hasTable: func(t *testing.T, url, table string) bool {
			out, err := psql(url, "SELECT to_regclass('"+table+"') IS NOT NULL")
			if err != nil {
				t.Fatalf("query: %v\n%s", err, out)
			}
			return out == "t"
		},
		exists: func(_ *env, _, name string) bool {
			out, _ := psql(admin, "SELECT 1 FROM pg_database WHERE datname = '"+name+"'")
			return out == "1"
		},
		cleanup: func(project string) {
			out, _ := psql(admin, "SELECT datname FROM pg_database WHERE datname LIKE '"+project+"\\_golden\\_%'")
			for _, db := range strings.Fields(out) {
				psql(admin, `DROP DATABASE IF EXISTS "`+db+`" WITH (FORCE)`)
			}
		},
	})
}

type goldenListJSON struct {
	Templates []struct {
		Project, Service, Adapter, Name, Key string
		CloneFrom                            string   `json:"clone_from"`
		Worlds                               []string `json:"worlds"`
		Size                                 int64    `json:"size"`
	} `json:"templates"`
}

func goldenList(t *testing.T, e *env, project string) goldenListJSON {
	t.Helper()
	var l goldenListJSON
	r := e.must("golden", "list", "--json", "--project", project)
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("golden list --json: %v\n%s", err, r.stdout)
	}
	return l
}

// testGoldenInputs: two branches with different migration files each get a
// template of their own schema (before inputs, branch two silently cloned
// branch one's); a third world with branch one's migrations clones branch
// one's template without building; remove leaves templates; golden_keep = 1
// drops the older ones after the next build; golden list and drop work;
// check warns about clone_from without inputs.
func testGoldenInputs(t *testing.T, b inputsBackend) {
	project := runName("gi" + b.adapter[:2])
	admin := ""
	if b.admin != "" {
		admin = `admin_url  = "${env.BINKY_TEST_ADMIN_URL}"`
	}
	cfg := fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.db]
adapter    = %q
%s
migrate    = "sh ./migrate.sh '${self.url}'"
clone_from = "golden"
inputs     = ["db/migrations/**"]

[agents]
expose = ["db"]
`, project, b.adapter, admin)
	e := newEnv(t, cfg)
	e.extra = []string{"BINKY_TEST_ADMIN_URL=" + b.admin}
	t.Cleanup(func() { b.cleanup(project) })
	write := func(rel, content string) {
		p := filepath.Join(e.repo, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("migrate.sh", migrateScript)
	write("db/migrations/001_items.sql", "CREATE TABLE items (id integer PRIMARY KEY, note text);\n")
	e.git("add", "-A")
	e.git("commit", "-qm", "items")
	e.git("branch", "one")
	e.git("branch", "three")
	e.git("checkout", "-qb", "two")
	write("db/migrations/nested/002_orders.sql", "CREATE TABLE orders (id integer PRIMARY KEY);\n")
	e.git("add", "-A")
	e.git("commit", "-qm", "orders")
	e.git("checkout", "-q", "main")

	dbURL := func(branch string) string {
		var m map[string]string
		json.Unmarshal([]byte(e.must("env", branch).stdout), &m)
		if m["db"] == "" {
			t.Fatalf("env %s has no db", branch)
		}
		return m["db"]
	}

	e.must("up", "one")
	e.must("up", "two")
	if !b.hasTable(t, dbURL("two"), "orders") {
		t.Errorf("world two has no orders table: it cloned branch one's template instead of building its own")
	}
	if b.hasTable(t, dbURL("one"), "orders") {
		t.Errorf("world one has branch two's orders table")
	}
	if !b.hasTable(t, dbURL("one"), "items") || !b.hasTable(t, dbURL("two"), "items") {
		t.Errorf("a world lacks the items table both branches migrate")
	}
	if n := countAll(t, e, "golden_built"); n != 2 {
		t.Errorf("golden_built %d times for two branches with different migrations; want 2", n)
	}
	l := goldenList(t, e, project)
	if len(l.Templates) != 2 || l.Templates[0].Key == l.Templates[1].Key {
		t.Fatalf("golden list: %+v; want two templates with different keys", l.Templates)
	}
	byWorld := map[string]string{}
	for _, tp := range l.Templates {
		if tp.CloneFrom != "golden" || tp.Service != "db" || tp.Adapter != b.adapter || !strings.Contains(tp.Name, tp.Key) {
			t.Errorf("template %+v: want service db, clone_from golden, adapter %s, the key in its name", tp, b.adapter)
		}
		if !b.exists(e, project, tp.Name) {
			t.Errorf("template %s is listed but does not exist", tp.Name)
		}
		for _, w := range tp.Worlds {
			byWorld[w] = tp.Name
		}
	}
	if byWorld["one"] == "" || byWorld["two"] == "" || byWorld["one"] == byWorld["two"] {
		t.Errorf("worlds by template %v; want one and two cloned from different templates", byWorld)
	}
	first := byWorld["one"]

	// Branch three carries branch one's migrations: it clones branch one's
	// template, building nothing.
	e.must("up", "three")
	if n := countAll(t, e, "golden_built"); n != 2 {
		t.Errorf("golden_built %d times after a world with branch one's migrations; want still 2", n)
	}
	if b.hasTable(t, dbURL("three"), "orders") {
		t.Errorf("world three has the orders table only branch two migrates")
	}
	for _, tp := range goldenList(t, e, project).Templates {
		if tp.Name == first && !strings.Contains(strings.Join(tp.Worlds, ","), "three") {
			t.Errorf("template %s lists worlds %v; want three among them", tp.Name, tp.Worlds)
		}
	}
	if text := e.must("golden", "list").stdout; !strings.Contains(text, first) || !strings.Contains(text, "one") {
		t.Errorf("golden list does not show template %s and its world:\n%s", first, text)
	}

	// remove of every world leaves the templates.
	for _, br := range []string{"one", "two", "three"} {
		e.must("remove", "-q", br)
	}
	if l := goldenList(t, e, project); len(l.Templates) != 2 {
		t.Fatalf("after removing every world, %d templates listed; want 2 (remove leaves templates)", len(l.Templates))
	} else {
		for _, tp := range l.Templates {
			if len(tp.Worlds) != 0 {
				t.Errorf("template %s still lists removed worlds %v", tp.Name, tp.Worlds)
			}
		}
	}

	// golden_keep = 1: the next build drops the others.
	c := strings.Replace(read(filepath.Join(e.repo, "binky.toml")), "port_range", "golden_keep = 1\nport_range", 1)
	write("binky.toml", c)
	write("db/migrations/003_users.sql", "CREATE TABLE users (id integer PRIMARY KEY);\n")
	e.git("add", "-A")
	e.git("commit", "-qm", "keep one template; users")
	e.must("up", "four")
	if !b.hasTable(t, dbURL("four"), "users") {
		t.Errorf("world four has no users table")
	}
	l = goldenList(t, e, project)
	if len(l.Templates) != 1 {
		t.Fatalf("golden_keep = 1: %d templates listed; want 1\n%+v", len(l.Templates), l.Templates)
	}
	kept := l.Templates[0].Name
	for _, old := range []string{byWorld["one"], byWorld["two"]} {
		if old == kept || b.exists(e, project, old) {
			t.Errorf("golden_keep = 1: older template %s still exists", old)
		}
	}

	// drop: an unknown name is refused, a known one goes.
	if r := e.binky("golden", "drop", "nope_golden_x"); r.code == 0 || !strings.Contains(r.stderr, "no template named") {
		t.Errorf("golden drop of an unknown name: exit %d, %q; want a refusal naming the problem", r.code, r.stderr)
	}
	e.must("golden", "drop", kept)
	if b.exists(e, project, kept) {
		t.Errorf("template %s survives golden drop", kept)
	}
	if l := goldenList(t, e, project); len(l.Templates) != 0 {
		t.Errorf("after drop, %d templates listed", len(l.Templates))
	}
	// The next up builds again; drop --project clears it.
	e.must("reset", "four")
	if n := countAll(t, e, "golden_built"); n != 4 {
		t.Errorf("golden_built %d after reset of a dropped template; want 4", n)
	}
	e.must("golden", "drop", "--project", project)
	if l := goldenList(t, e, project); len(l.Templates) != 0 {
		t.Errorf("after drop --project, %d templates listed", len(l.Templates))
	}

	// check warns about clone_from with migrate but no inputs, with the line.
	noInputs := filepath.Join(t.TempDir(), "binky.toml")
	noCfg := strings.Replace(cfg, `inputs     = ["db/migrations/**"]`, "", 1)
	os.WriteFile(noInputs, []byte(strings.ReplaceAll(noCfg, "PORTRANGE", "[41000, 41010]")), 0o644)
	r := e.binky("check", noInputs)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "no inputs") || !strings.Contains(r.stdout+r.stderr, "binky.toml:10") {
		t.Errorf("check of clone_from without inputs: exit %d\n%s%s\nwant a warning at binky.toml:10", r.code, r.stdout, r.stderr)
	}
}

// TestGoldenNoCloneAdapter: an adapter that answers clone: false (kafka;
// redis clones since issue 27) gets no template: its slice is seeded
// directly, with no golden_built and no clone_fallback, and golden list
// stays empty.
func TestGoldenNoCloneAdapter(t *testing.T) {
	needServer(t, "kfake", "127.0.0.1:9092", "scripts/testenv up")
	project := runName("gnc")
	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.cache]
adapter    = "kafka"
admin_url  = "${env.BINKY_TEST_ADMIN_URL}"
seed       = "echo seeding '${self.url}'"
clone_from = "golden"
inputs     = ["binky.toml"]
`, project))
	e.extra = []string{"BINKY_TEST_ADMIN_URL=kafka://127.0.0.1:9092"}
	e.must("up", "one")
	if n := countAll(t, e, "seed_done"); n != 1 {
		t.Errorf("seed_done %d; want 1 (the slice is seeded directly)", n)
	}
	for _, ev := range []string{"golden_built", "clone_fallback", "slice_cloned"} {
		if n := countAll(t, e, ev); n != 0 {
			t.Errorf("%s %d times for an adapter that cannot clone; want 0", ev, n)
		}
	}
	if l := goldenList(t, e, project); len(l.Templates) != 0 {
		t.Errorf("golden list: %+v; want no template for an adapter that cannot clone", l.Templates)
	}
}
