package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 40 item 1: with the env_file binky init writes (ignored by git,
// so only the main worktree has it) and a server that is unreachable when
// remove runs, remove deletes the worktree and fails on the slice. Every
// retry must still find what it needs (it was recorded before anything was
// deleted): a plain retry fails on the server again, not on the env_file,
// and --force ends with the world gone, naming the slice it left and where.
func TestRemoveRetryNeedsNoFileOfItsWorktree(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	project := runName("rmconv")
	e := newEnv(t, `
[project]
name = "`+project+`"
port_range = PORTRANGE
env_file = ".env"

[services.pg]
adapter   = "postgres"
admin_url = "${env.PG_ADMIN_URL}"
`)
	os.WriteFile(filepath.Join(e.repo, ".gitignore"), []byte(".env\n"), 0o644)
	e.git("add", ".gitignore")
	e.git("commit", "-q", "-m", "ignore .env")
	envFile := filepath.Join(e.repo, ".env")
	os.WriteFile(envFile, []byte("PG_ADMIN_URL="+e2ePostgres+"\n"), 0o600)
	t.Cleanup(func() { dropPostgresLike(project) })

	e.must("up", "-q", "feat/rm")
	w := e.status().world(t, "feat-rm")
	// The server moves away (here: the env_file points at a closed port).
	os.WriteFile(envFile, []byte("PG_ADMIN_URL=postgres://postgres@127.0.0.1:1/postgres\n"), 0o600)

	r := e.binky("remove", "feat/rm")
	if r.code == 0 {
		t.Fatalf("remove with the slice's server unreachable exited 0:\n%s", r.stderr)
	}
	if _, err := os.Stat(w.Path); err == nil {
		t.Fatalf("the worktree %s is still there; this test needs a remove that deleted it before failing:\n%s", w.Path, r.stderr)
	}
	r = e.binky("remove", "feat/rm")
	if r.code == 0 {
		t.Fatalf("a retry reached the closed port:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "env_file") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("a retry of remove after the worktree went: %s\nwant the slice's server named again, with --force as the way out, not an env_file the worktree took with it", r.stderr)
	}
	r = e.binky("remove", "--force", "feat/rm")
	if r.code != 0 {
		t.Fatalf("remove --force after the worktree went: exit %d\n%s\ndaemon log:\n%s", r.code, r.stderr, e.daemonLog())
	}
	if !strings.Contains(r.stderr, "127.0.0.1:1") || !strings.Contains(r.stderr, "pg") {
		t.Errorf("remove --force does not say which slice it left on which server:\n%s", r.stderr)
	}
	if s := e.status(); len(s.Worlds) != 0 {
		t.Errorf("worlds after remove --force: %+v", s.Worlds)
	}
}

// dropPostgresLike drops the databases and roles of the shared test
// server whose names start with prefix: what a test left there on purpose.
func dropPostgresLike(prefix string) {
	q := func(sql string) []string {
		out, _ := exec.Command("psql", "-qXAt", e2ePostgres, "-c", sql).Output()
		return strings.Fields(string(out))
	}
	for _, db := range q("SELECT datname FROM pg_database WHERE datname LIKE '" + prefix + "%'") {
		q(`DROP DATABASE IF EXISTS "` + db + `" WITH (FORCE)`)
	}
	for _, role := range q("SELECT rolname FROM pg_roles WHERE rolname LIKE '" + prefix + "%'") {
		q(`DROP ROLE IF EXISTS "` + role + `"`)
	}
}
