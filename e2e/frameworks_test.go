//go:build linux

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRailsStyleURLFromParts (issue 27): a binky.toml builds the URL Rails
// wants, mysql2://${db.user}:${db.password}@${db.host}:${db.port}/${db.database},
// from the mysql adapter's values, with config scheme = "mysql2" giving
// ${db.url} the same scheme. The service prints both and connects with
// the mariadb client from the parts. The raw log holds the exact URLs;
// `binky logs` and `binky status` never show the password.
func TestRailsStyleURLFromParts(t *testing.T) {
	needServer(t, "MariaDB", "127.0.0.1:3306", "service mariadb start")
	needCommand(t, "mariadb", "apt-get install mariadb-client")
	b := make([]byte, 4)
	rand.Read(b)
	tag := hex.EncodeToString(b)
	project, user := runName("fw"+tag), "bk_fw_"+tag
	pw := "Fw-Pa55-" + tag // a secret of its own, so only the adapter's values can leak it
	root := func(sql string) {
		t.Helper()
		if out, err := exec.Command("mariadb", "--protocol=tcp", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "-e", sql).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, out)
		}
	}
	root(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO '%s'@'%%'", user, pw, user))
	t.Cleanup(func() {
		exec.Command("mariadb", "--protocol=tcp", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "-e",
			fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'; DROP DATABASE IF EXISTS `%s_main`", user, project)).Run()
	})

	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.db]
adapter   = "mariadb"
admin_url = "${env.FW_MYSQL_ADMIN_URL}"
config    = { scheme = "mysql2" }

[services.app]
depends_on = ["db"]
env = { DATABASE_URL = "mysql2://${db.user}:${db.password}@${db.host}:${db.port}/${db.database}", DB_URL = "${db.url}" }
cmd = """
echo "rails $DATABASE_URL"
echo "address $DB_URL"
mariadb --protocol=tcp -h ${db.host} -P ${db.port} -u ${db.user} --password=${db.password} -N -e 'SELECT CONCAT("connected-to-", DATABASE())' ${db.database}
echo end-of-frameworks
exec sleep 600
"""
`, project))
	e.extra = []string{"FW_MYSQL_ADMIN_URL=mysql://" + user + ":" + pw + "@127.0.0.1:3306/"}
	e.must("up", "-q", "main")

	db := project + "_main"
	wantRails := fmt.Sprintf("mysql2://%s:%s@127.0.0.1:3306/%s", user, pw, db)
	logFile := filepath.Join(e.home, "logs", project, "main", "app.log")
	var raw string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(logFile)
		if raw = string(b); strings.Contains(raw, "end-of-frameworks") {
			break
		}
	}
	for _, want := range []string{"rails " + wantRails, "address " + wantRails, "connected-to-" + db} {
		if !strings.Contains(raw, want) {
			t.Errorf("the service's log on disk lacks %q:\n%s", want, raw)
		}
	}

	logs := e.must("logs", "main", "app", "-n", "0").stdout
	if !strings.Contains(logs, "connected-to-"+db) || !strings.Contains(logs, "mysql2://"+user+":") {
		t.Errorf("binky logs lacks the connection line or the URL's user:\n%s", logs)
	}
	status := e.must("status", "--json").stdout
	if !strings.Contains(status, "mysql2://") {
		t.Errorf("status shows no mysql2:// address:\n%s", status)
	}
	for what, out := range map[string]string{"binky logs": logs, "binky status --json": status} {
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the password:\n%s", what, out)
		}
	}
}

// TestRedisGoldenClone (issue 27): a redis service with clone_from gets a
// golden template built once and each world cloned from it (COPY under
// the world's prefix): the key the seed wrote under ${cache.namespace} is
// there in both worlds, each under its own prefix, with no fallback.
func TestRedisGoldenClone(t *testing.T) {
	needServer(t, "Redis", "127.0.0.1:6379", "redis-server --daemonize yes")
	needCommand(t, "redis-cli", "apt-get install redis-tools")
	project := runName("rg")
	e := newEnv(t, fmt.Sprintf(`
[project]
name = %q
port_range = PORTRANGE

[services.cache]
adapter    = "redis"
admin_url  = "${env.RG_REDIS_ADMIN_URL}"
seed       = '''redis-cli -u "${self.url}" SET "${self.namespace}:mail:seeded" yes'''
clone_from = "golden"
inputs     = ["binky.toml"]
`, project))
	e.extra = []string{"RG_REDIS_ADMIN_URL=redis://127.0.0.1:6379/0"}
	// Runs before the env's cleanup (while its daemon is up): the
	// template's keys, user and claim leave the server.
	t.Cleanup(func() { e.binky("golden", "drop", "-q", "--project", project) })
	e.must("up", "-q", "one")
	e.must("up", "-q", "two")
	if n := countAll(t, e, "slice_cloned"); n != 2 {
		t.Errorf("slice_cloned %d times; want 2", n)
	}
	if n := countAll(t, e, "clone_fallback"); n != 0 {
		t.Errorf("clone_fallback %d times; want 0", n)
	}
	for _, wt := range []string{"one", "two"} {
		key := project + "_" + wt + ":mail:seeded"
		out, err := exec.Command("redis-cli", "-u", "redis://127.0.0.1:6379/0", "GET", key).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "yes" {
			t.Errorf("GET %s = %q, %v; want the seeded yes", key, out, err)
		}
	}
	e.must("golden", "drop", "-q", "--project", project)
	if out, _ := exec.Command("redis-cli", "--scan", "--pattern", project+"_golden_*").CombinedOutput(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("golden drop left the template's keys: %s", out)
	}
}
