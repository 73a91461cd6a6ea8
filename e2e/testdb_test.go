package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTestDatabasesDroppedByRemove: with owner_role and test_databases,
// a suite running as the slice's role (binky run, with the world's
// database URL) creates Django's test_<db> and a Go suite's
// <db>_test_<random>, and binky remove drops them with the slice.
func TestTestDatabasesDroppedByRemove(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	needCommand(t, "psql", "apt-get install postgresql-client")
	project := runName("tdb") // its slice is on the shared server
	e := newEnv(t, `
[project]
name = "`+project+`"
port_range = PORTRANGE

[services.db]
adapter   = "postgres"
admin_url = "`+e2ePostgres+`"
config    = { owner_role = true, test_databases = true }

[agents]
expose = ["db"]
`)
	e.must("up", "-q", "t1")
	r := e.binky("run", "t1", "--", "sh", "-c",
		`set -e; db=$(psql -qXAt "$BINKY_DB_URL" -c 'SELECT current_database()'); `+
			`psql -qXAt "$BINKY_DB_URL" -c "CREATE DATABASE \"test_$db\"" -c "CREATE DATABASE \"${db}_test_8f3a\""; echo "$db"`)
	if r.code != 0 {
		t.Fatalf("creating test databases as the slice's role: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	db := strings.TrimSpace(r.stdout)
	names := "'test_" + db + "', '" + db + "_test_8f3a', '" + db + "'"
	count := func() string {
		out, err := exec.Command("psql", "-qXAt", e2ePostgres, "-c", "SELECT count(*) FROM pg_database WHERE datname IN ("+names+")").CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := count(); got != "3" {
		t.Fatalf("%s databases of %s; want 3 (the slice and its two test databases)", got, names)
	}
	e.must("remove", "t1")
	if got := count(); got != "0" {
		t.Errorf("after remove %s of %s remain; want none", got, names)
	}
}
