package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

const goldenSQLite = `
[project]
name = "gold"
port_range = PORTRANGE

[services.db]
adapter    = "sqlite"
migrate    = "binky-demo-app migrate --db '${self.url}'"
seed       = "SEED_NOTE=1 binky-demo-app seed --db '${self.url}'"
clone_from = "golden"

[services.api]
cmd        = "binky-demo-app serve --db '${db.url}' --name '${worktree.name}'"
url        = "api"
depends_on = ["db"]
health     = "http://127.0.0.1:${self.port}/healthz"

[agents]
expose = ["api", "db"]
`

// TestGoldenTemplateSQLite: the first up builds the template once (even
// with concurrent ups), later worlds only clone; changing seed rebuilds it;
// reset puts a world back; a failed clone falls back and still yields the
// seeded world.
func TestGoldenTemplateSQLite(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	e := newEnv(t, goldenSQLite)
	e.must("daemon", "start")
	var wg sync.WaitGroup
	res := make([]result, 3)
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = e.binky("up", fmt.Sprintf("g/%d", i)) }()
	}
	wg.Wait()
	waited := false
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("up g/%d: exit %d\n%s", i, r.code, r.stderr)
		}
		waited = waited || strings.Contains(r.stderr, "waiting")
	}
	if n := countAll(t, e, "golden_built"); n != 1 {
		t.Errorf("golden_built %d times for 3 concurrent ups; want 1", n)
	}
	if n := countAll(t, e, "slice_cloned"); n != 3 {
		t.Errorf("slice_cloned %d times; want 3", n)
	}
	if !waited {
		t.Logf("no up reported waiting for the template build (they may not have overlapped)")
	}
	st := e.status()
	w0, w1 := st.Worlds[0], st.Worlds[1]
	api0 := fmt.Sprintf("http://127.0.0.1:%d/", w0.service(t, "api").Port)
	api1 := fmt.Sprintf("http://127.0.0.1:%d/", w1.service(t, "api").Port)
	// Each world starts from the seeded row; a visit in one is invisible in
	// the other.
	get(t, api0)
	if got := get(t, api0); !strings.Contains(got, "3 visits") {
		t.Errorf("world 0: %q; want 3 visits (1 seeded + 2)", got)
	}
	if got := get(t, api1); !strings.Contains(got, "2 visits") {
		t.Errorf("world 1: %q; want 2 visits (1 seeded + 1)", got)
	}

	// reset puts world 0 back to the golden state.
	e.must("down", w0.Branch)
	e.must("reset", w0.Branch)
	e.must("up", w0.Branch)
	w0 = e.status().world(t, w0.Worktree)
	api0 = fmt.Sprintf("http://127.0.0.1:%d/", w0.service(t, "api").Port)
	if got := get(t, api0); !strings.Contains(got, "2 visits") {
		t.Errorf("after reset: %q; want 2 visits (the seeded row + this one)", got)
	}

	// Changing seed rebuilds the template on the next up.
	cfg := strings.ReplaceAll(read(filepath.Join(e.repo, "binky.toml")), "SEED_NOTE=1", "SEED_NOTE=2")
	os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(cfg), 0o644)
	e.git("commit", "-qam", "new seed")
	e.must("up", "g/new")
	if n := countAll(t, e, "golden_built"); n != 2 {
		t.Errorf("golden_built %d times after seed changed; want 2", n)
	}

	// A clone that fails (the template vanished behind binky's back) falls
	// back to provision+migrate+seed, logs clone_fallback, and the world is
	// the same.
	// Templates are named <project>_golden_<clone_from>_<key>.
	goldens, _ := filepath.Glob(filepath.Join(e.home, "data", "sqlite", e.project, e.project+"_golden_golden_*.db"))
	if len(goldens) == 0 {
		t.Fatalf("no golden slice file in %s", filepath.Join(e.home, "data", "sqlite", e.project))
	}
	for _, g := range goldens {
		os.Remove(g)
	}
	e.must("up", "g/fallback")
	if n := countAll(t, e, "clone_fallback"); n != 1 {
		t.Errorf("clone_fallback %d times; want 1", n)
	}
	wf := e.status().world(t, worldOf(t, e, "g/fallback"))
	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", wf.service(t, "api").Port)); !strings.Contains(got, "2 visits") {
		t.Errorf("fallback world: %q; want the seeded row + this visit", got)
	}

	// remove drops the slice.
	slice := strings.TrimPrefix(wf.service(t, "db").Address, "sqlite://")
	e.must("remove", "g/fallback")
	if _, err := os.Stat(slice); !os.IsNotExist(err) {
		t.Errorf("slice %s survives remove: %v", slice, err)
	}
}

func worldOf(t *testing.T, e *env, branch string) string {
	t.Helper()
	for _, w := range e.status().Worlds {
		if w.Branch == branch {
			return w.Worktree
		}
	}
	t.Fatalf("no world for %s", branch)
	return ""
}

func countAll(t *testing.T, e *env, name string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(read(filepath.Join(e.home, "events.log")), "\n") {
		var ev struct{ Event string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == name {
			n++
		}
	}
	return n
}

// needServer fails under CI and skips locally when addr does not answer.
func needServer(t *testing.T, what, addr, start string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return
	}
	adaptertest.MissingServer(t, fmt.Sprintf("%s is not running on %s (%v); start it: %s", what, addr, err, start))
}

// TestGoldenTemplatePostgres: two worlds cloned from one golden database
// see the seeded rows, a row written in one is invisible in the other, an
// induced clone failure falls back, and remove drops the databases.
func TestGoldenTemplatePostgres(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	testGoldenSQL(t, sqlServer{
		adapter: "postgres", admin: "postgres://postgres@127.0.0.1:5432/postgres",
		migrate: `psql -qX "${self.url}" -v ON_ERROR_STOP=1 -c 'CREATE TABLE items (id serial PRIMARY KEY, note text)'`,
		seed:    `psql -qX "${self.url}" -v ON_ERROR_STOP=1 -c "INSERT INTO items (note) VALUES ('seeded')"`,
		query: func(url, sql string) (string, error) {
			out, err := exec.Command("psql", "-qXAt", url, "-c", sql).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		},
		dropGolden: func(project string) error {
			const admin = "postgres://postgres@127.0.0.1:5432/postgres"
			out, err := exec.Command("psql", "-qXAt", admin, "-c", "SELECT datname FROM pg_database WHERE datname LIKE '"+project+"\\_golden\\_golden\\_%'").Output()
			if err != nil {
				return err
			}
			for _, db := range strings.Fields(string(out)) {
				if err := exec.Command("psql", "-qX", admin, "-c", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)").Run(); err != nil {
					return err
				}
			}
			return nil
		},
		exists: func(db string) bool {
			out, _ := exec.Command("psql", "-qXAt", "postgres://postgres@127.0.0.1:5432/postgres", "-c", "SELECT 1 FROM pg_database WHERE datname = '"+db+"'").Output()
			return strings.TrimSpace(string(out)) == "1"
		},
	})
}

// TestGoldenTemplateMySQL is the same against MariaDB (the mysql adapter).
func TestGoldenTemplateMySQL(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needServer(t, "MariaDB", "127.0.0.1:3306", "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd")
	mysql := func(db, sql string) *exec.Cmd {
		args := []string{"-h127.0.0.1", "-P3306", "-uroot", "-N", "-B", "-e", sql}
		if db != "" {
			args = append(args, db)
		}
		return exec.Command("mariadb", args...)
	}
	testGoldenSQL(t, sqlServer{
		adapter: "mysql", admin: "mysql://root@127.0.0.1:3306/",
		migrate: `mariadb -h127.0.0.1 -P3306 -uroot "${db.database}" -e 'CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)'`,
		seed:    `mariadb -h127.0.0.1 -P3306 -uroot "${db.database}" -e "INSERT INTO items (note) VALUES ('seeded')"`,
		query: func(url, sql string) (string, error) {
			db := url[strings.LastIndexByte(url, '/')+1:]
			if i := strings.IndexByte(db, '?'); i >= 0 {
				db = db[:i]
			}
			out, err := mysql(db, sql).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		},
		dropGolden: func(project string) error {
			out, err := mysql("", "SHOW DATABASES LIKE '"+project+"\\_golden\\_golden\\_%'").Output()
			if err != nil {
				return err
			}
			for _, db := range strings.Fields(string(out)) {
				if err := mysql("", "DROP DATABASE IF EXISTS "+db).Run(); err != nil {
					return err
				}
			}
			return nil
		},
		exists: func(db string) bool {
			out, _ := mysql("", "SHOW DATABASES LIKE '"+db+"'").Output()
			return strings.TrimSpace(string(out)) == db
		},
	})
}

type sqlServer struct {
	adapter, admin, migrate, seed string
	query                         func(url, sql string) (string, error)
	dropGolden                    func(project string) error
	exists                        func(db string) bool
}

func testGoldenSQL(t *testing.T, s sqlServer) {
	project := runName("g" + s.adapter[:2])
	migrate := strings.ReplaceAll(s.migrate, "${db.database}", "${self.database}")
	seed := strings.ReplaceAll(s.seed, "${db.database}", "${self.database}")
	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.db]
adapter    = %q
admin_url  = "${env.BINKY_TEST_ADMIN_URL}"
migrate    = %q
seed       = %q
clone_from = "golden"

[agents]
expose = ["db"]
`, project, s.adapter, migrate, seed))
	e.extra = []string{"BINKY_TEST_ADMIN_URL=" + s.admin}
	t.Cleanup(func() { s.dropGolden(project) })

	e.must("up", "one")
	e.must("up", "two")
	env := func(b string) string {
		var m map[string]string
		json.Unmarshal([]byte(e.must("env", b).stdout), &m)
		return m["db"]
	}
	one, two := env("one"), env("two")
	for _, u := range []string{one, two} {
		if got, err := s.query(u, "SELECT note FROM items"); err != nil || got != "seeded" {
			t.Fatalf("world %s: %q %v; want the seeded row", u, got, err)
		}
	}
	if _, err := s.query(one, "INSERT INTO items (note) VALUES ('only in one')"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.query(two, "SELECT count(*) FROM items"); got != "1" {
		t.Errorf("world two sees %s rows; want 1 (a row written in one is invisible in two)", got)
	}
	if n := countAll(t, e, "golden_built"); n != 1 {
		t.Errorf("golden_built %d; want 1", n)
	}
	// Issue 40: golden list gave a server's template no size.
	var list struct {
		Templates []struct {
			Size int64 `json:"size"`
		} `json:"templates"`
	}
	if err := json.Unmarshal([]byte(e.must("golden", "list", "--json").stdout), &list); err != nil || len(list.Templates) != 1 || list.Templates[0].Size <= 0 {
		t.Errorf("golden list --json: %+v (%v); want one template with its size", list.Templates, err)
	}

	// Induced clone failure: the template is dropped behind binky's back.
	if err := s.dropGolden(project); err != nil {
		t.Fatal(err)
	}
	e.must("up", "three")
	if n := countAll(t, e, "clone_fallback"); n != 1 {
		t.Errorf("clone_fallback %d; want 1", n)
	}
	if got, err := s.query(env("three"), "SELECT note FROM items"); err != nil || got != "seeded" {
		t.Errorf("fallback world: %q %v; want the seeded row", got, err)
	}

	// remove drops the slices.
	for _, b := range []string{"one", "two", "three"} {
		e.must("remove", b)
	}
	for _, b := range []string{"one", "two", "three"} {
		if db := project + "_" + b; s.exists(db) {
			t.Errorf("database %s survives remove", db)
		}
	}
}
