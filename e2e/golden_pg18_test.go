package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestGoldenPostgres18CopyOnWrite: on the PostgreSQL 18 of scripts/testenv
// (reflink XFS), a world cloned from a golden template is reported
// copy-on-write in its slice_cloned event, golden list and status. Then
// the template is moved to the tablespace off the reflink mount, and the
// next world's clone is reported as a copy, there and in golden list.
func TestGoldenPostgres18CopyOnWrite(t *testing.T) {
	admin := os.Getenv("BINKY_TEST_POSTGRES18_URL")
	if admin == "" {
		needServer(t, "PostgreSQL 18 (BINKY_TEST_POSTGRES18_URL)", "127.0.0.1:5418", "scripts/testenv up pg18")
		admin = "postgres://postgres@127.0.0.1:5418/postgres"
	}
	psql := func(sql string) string {
		t.Helper()
		out, err := exec.Command("psql", "-qXAt", admin, "-c", sql).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if v := psql("SHOW server_version_num"); v < "180000" {
		t.Skipf("the server at %s is %s, not 18", admin, v)
	}
	dataDir := psql("SHOW data_directory")
	if _, err := os.Stat(filepath.Join(dataDir, "global", "pg_control")); err != nil {
		t.Skipf("the server's data directory is not readable here: %v", err)
	}
	project := runName("gpg")
	e := newEnv(t, `
[project]
name = "`+project+`"
port_range = PORTRANGE

[services.db]
adapter    = "postgres"
admin_url  = "${env.BINKY_TEST_ADMIN_URL}"
migrate    = "psql -qX '${self.url}' -v ON_ERROR_STOP=1 -c 'CREATE TABLE items (id int PRIMARY KEY, note text)'"
seed       = "psql -qX '${self.url}' -v ON_ERROR_STOP=1 -c \"INSERT INTO items SELECT g, 'seeded' FROM generate_series(1, 10000) g\""
clone_from = "golden"
`)
	e.extra = []string{"BINKY_TEST_ADMIN_URL=" + admin}
	t.Cleanup(func() {
		for _, db := range strings.Fields(psql("SELECT datname FROM pg_database WHERE datname LIKE '" + project + "\\_%'")) {
			psql("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)")
		}
	})
	type tmpl struct {
		Name        string `json:"name"`
		Method      string `json:"method"`
		CopyOnWrite string `json:"copy_on_write"`
	}
	golden := func() tmpl {
		t.Helper()
		var l struct{ Templates []tmpl }
		if err := json.Unmarshal([]byte(e.must("golden", "list", "--json", "--project", project).stdout), &l); err != nil || len(l.Templates) != 1 {
			t.Fatalf("golden list: %v %+v; want one template", err, l)
		}
		return l.Templates[0]
	}
	methods := func() []string {
		var out []string
		for _, line := range strings.Split(read(filepath.Join(e.home, "events.log")), "\n") {
			var ev struct{ Event, Method string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "slice_cloned" {
				out = append(out, ev.Method)
			}
		}
		return out
	}

	e.must("up", "one")
	if m := methods(); len(m) != 1 || m[0] != "file_copy, copy-on-write" {
		t.Fatalf("slice_cloned methods %q; want one file_copy, copy-on-write", m)
	}
	if g := golden(); g.CopyOnWrite != "copy-on-write" {
		t.Errorf("golden list: %+v; want copy_on_write copy-on-write", g)
	}
	if out := e.must("golden", "list").stdout; !strings.Contains(out, "COPY-ON-WRITE") || !strings.Contains(out, " yes ") {
		t.Errorf("golden list:\n%s\nwant a COPY-ON-WRITE column saying yes", out)
	}
	if out := e.must("status").stdout; !strings.Contains(out, "cloned: file_copy, copy-on-write") {
		t.Errorf("status:\n%s\nwant the slice's clone method", out)
	}

	// The template off the reflink mount: the server copies the bytes.
	if psql("SELECT count(*) FROM pg_tablespace WHERE spcname = 'binky_plain'") != "1" {
		adaptertest.MissingServer(t, "no tablespace binky_plain on PostgreSQL 18 (scripts/testenv up pg18 makes it)")
	}
	tp := golden().Name
	out, err := exec.Command("psql", "-qXAt", admin, "-c", "SET file_copy_method = copy", "-c", "ALTER DATABASE "+tp+" SET TABLESPACE binky_plain").CombinedOutput()
	if err != nil {
		t.Fatalf("move the template: %v\n%s", err, out)
	}
	e.must("up", "two")
	if m := methods(); len(m) != 2 || m[1] != "file_copy, copied" {
		t.Fatalf("slice_cloned methods %q; want the second file_copy, copied", m)
	}
	if g := golden(); g.CopyOnWrite != "copied" || g.Method != "file_copy, copied" {
		t.Errorf("golden list: %+v; want copied", g)
	}
	for _, b := range []string{"one", "two"} {
		e.must("remove", b)
	}
}
