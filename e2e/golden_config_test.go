package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenKeyFollowsOwnerRole: turning owner_role on for a project that
// already has a template builds a new one (the adapter config is in the
// key), and reset gives the world a slice whose tables its own role owns
// and may write. Before, reset cloned the old template, whose tables the
// admin owned: "permission denied for table items" while reset said ok.
func TestGoldenKeyFollowsOwnerRole(t *testing.T) {
	t.Parallel() // own home, ports and project; it waits mostly on its server (docs/architecture.md, "Testing")
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	const admin = "postgres://postgres@127.0.0.1:5432/postgres"
	psql := func(url, sql string) (string, error) {
		out, err := exec.Command("psql", "-qXAt", "-v", "ON_ERROR_STOP=1", url, "-c", sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	project := runName("gor")
	const service = `
[services.db]
adapter    = "postgres"
admin_url  = "${env.BINKY_TEST_ADMIN_URL}"
migrate    = "psql -qX -v ON_ERROR_STOP=1 '${self.url}' -f db/schema.sql"
clone_from = "golden"
inputs     = ["db/schema.sql"]
`
	head := fmt.Sprintf("[project]\nname = %q\nport_range = PORTRANGE\n\n[agents]\nexpose = [\"db\"]\n", project)
	e := newEnv(t, head+service)
	e.extra = []string{"BINKY_TEST_ADMIN_URL=" + admin}
	os.MkdirAll(filepath.Join(e.repo, "db"), 0o755)
	os.WriteFile(filepath.Join(e.repo, "db", "schema.sql"), []byte("CREATE TABLE items (id int PRIMARY KEY, note text);\n"), 0o644)
	e.git("add", "-A")
	e.git("commit", "-qm", "schema")
	t.Cleanup(func() {
		e.binky("remove", "one")
		e.binky("golden", "drop", "-q", "--project", project)
	})

	e.must("up", "one")
	w := e.status().world(t, worldOf(t, e, "one"))
	toml := filepath.Join(w.Path, "binky.toml")
	cfg := strings.Replace(read(toml), `clone_from = "golden"`, "clone_from = \"golden\"\nconfig     = { owner_role = true }", 1)
	if err := os.WriteFile(toml, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must("reset", "one")

	var m map[string]string
	json.Unmarshal([]byte(e.must("env", "one").stdout), &m)
	url := m["db"]
	if url == "" {
		t.Fatalf("binky env one has no db address: %v", m)
	}
	user, err := psql(url, "SELECT current_user")
	if err != nil || user == "" || user == "postgres" {
		t.Fatalf("the slice connects as %q (%v); want its own role (owner_role)", user, err)
	}
	if out, err := psql(url, "INSERT INTO items VALUES (1, 'written by the slice role')"); err != nil {
		t.Errorf("write to items as %s after turning owner_role on and reset: %v\n%s", user, err, out)
	}
	if owner, err := psql(url, "SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = 'items'"); owner != user {
		t.Errorf("items is owned by %q (%v); want the slice's role %s", owner, err, user)
	}
	if n := countAll(t, e, "golden_built"); n != 2 {
		t.Errorf("golden_built %d times; want 2 (owner_role changes what a clone contains, so it keys a new template)", n)
	}
}
