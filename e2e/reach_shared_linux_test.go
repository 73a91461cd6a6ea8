//go:build linux

package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// reachSharedWorld runs on the host: one PostgreSQL slice of the host's
// own server (127.0.0.1:5432 there), owned by a role of its own with a
// password (as Django's or Rails' settings would reach it), exposed.
const reachSharedWorld = `
[project]
name = "reachpg"
port_range = PORTRANGE

[services.db]
adapter   = "postgres"
admin_url = "postgres://postgres@127.0.0.1:5432/postgres"
config    = { owner_role = true }

[agents]
expose = ["db"]
`

// remoteDB is `binky --host box env wt`'s db coordinate, parsed, and
// what env said on stderr.
func (r *reachEnv) remoteDB(wt string) (*url.URL, string) {
	r.t.Helper()
	res := r.must("--host", "box", "env", wt)
	var env map[string]string
	if err := json.Unmarshal([]byte(res.stdout), &env); err != nil {
		r.t.Fatalf("env %s: %v\n%s", wt, err, res.stdout)
	}
	u, err := url.Parse(env["db"])
	if err != nil || u.Port() == "" {
		r.t.Fatalf("env %s: db = %q, not a URL with a port (%v)", wt, env["db"], err)
	}
	return u, res.stderr
}

// localPsql runs sql here, against the URL env printed.
func localPsql(u *url.URL, sql string) (string, error) {
	out, err := exec.Command("psql", "-qXAt", "-v", "ON_ERROR_STOP=1", u.String(), "-c", sql).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestReachSharedServerSlice: a world's slice lives on the host's own
// shared server (127.0.0.1:5432 there, a loopback this machine does not
// share). `binky --host box env` prints a coordinate that reaches that
// slice from here, through one forward of the host's server port that
// every world of the host shares, never this machine's own server on the
// same port; the forward goes with the host's last world that needs it.
func TestReachSharedServerSlice(t *testing.T) {
	h := newSSHHost(t)
	h.postgres()
	r := newReachEnvWith(t, h, reachSharedWorld, nil)
	// The host's binky finds its adapters in its home (sshd's PATH does
	// not hold bin/).
	os.MkdirAll(filepath.Join(r.hostHome, "adapters"), 0o755)
	if err := os.Symlink(filepath.Join(binDir, "binky-adapter-postgres"), filepath.Join(r.hostHome, "adapters", "binky-adapter-postgres")); err != nil {
		t.Fatal(err)
	}
	r.must("--host", "box", "up", "-q", "a", "--repo", r.hostRepo)
	r.must("--host", "box", "up", "-q", "b", "--repo", r.hostRepo)

	a, stderr := r.remoteDB("a")
	if strings.Contains(stderr, "no forward here") {
		t.Errorf("env a warns that an address is not forwarded:\n%s", stderr)
	}
	if a.Hostname() != "127.0.0.1" || a.Port() == "5432" {
		t.Fatalf("env a: db at %s; want a local forward, not the host's own 127.0.0.1:5432 (which is this machine's server here)", a.Host)
	}
	// Nothing env prints names the host's own server port: every
	// coordinate of the slice (the URL, and a host or port given apart)
	// answers here.
	dot := r.must("--host", "box", "env", "a", "--dotenv").stdout
	if strings.Contains(dot, "5432") {
		t.Errorf("env a --dotenv still names the host's port 5432:\n%s", dot)
	}
	b, _ := r.remoteDB("b")
	if b.Host != a.Host {
		t.Errorf("the two worlds' slices reach one server through %s and %s; want one forward for the host's port", a.Host, b.Host)
	}
	dbA := strings.TrimPrefix(a.Path, "/")

	// Written from here, through the printed URL, it lands in the host's
	// slice, and this machine's own server has no such database.
	got, err := localPsql(a, "CREATE TABLE made_here (x int); INSERT INTO made_here VALUES (42); SELECT current_database()")
	if err != nil || got != dbA {
		t.Fatalf("psql here through %s: %q %v; want the slice's database %s\n%s", a.Redacted(), got, err, dbA, r.daemonLog())
	}
	if got, err := h.psql(dbA, "SELECT x FROM made_here"); err != nil || got != "42" {
		t.Fatalf("on the host's server, %s.made_here: %q %v; want 42 (written from here)", dbA, got, err)
	}
	local, _ := exec.Command("psql", "-qXAt", "postgres://postgres@127.0.0.1:5432/postgres", "-c",
		"SELECT count(*) FROM pg_database WHERE datname = '"+dbA+"'").CombinedOutput()
	if strings.TrimSpace(string(local)) == "1" {
		t.Errorf("this machine's own server has a database %s: the slice was made here, not on the host", dbA)
	}

	// The host's first world gone, the forward stays for the second.
	r.must("--host", "box", "remove", "-q", "--force", "a")
	if got, err := localPsql(b, "SELECT current_database()"); err != nil || got != strings.TrimPrefix(b.Path, "/") {
		t.Fatalf("after a was removed, b's slice through %s: %q %v", b.Redacted(), got, err)
	}
	if got, _ := h.psql("postgres", "SELECT count(*) FROM pg_database WHERE datname = '"+dbA+"'"); got != "0" {
		t.Errorf("the removed world's database %s is still on the host's server", dbA)
	}
	// and goes with the last.
	r.must("--host", "box", "remove", "-q", "--force", "b")
	port, _ := strconv.Atoi(b.Port())
	waitFor(t, "the forward of the host's server port to go with its last world", func() bool { return !listening(t, port) })
	if got, _ := h.psql("postgres", "SELECT count(*) FROM pg_database WHERE datname LIKE '"+r.project+"%'"); got != "0" {
		t.Errorf("databases of %s left on the host's server: %s", r.project, got)
	}
}
