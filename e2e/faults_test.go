//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Regression tests for the lifecycle defects found under fault injection
// (issue 11): each ran against main before its fix and failed.

// sliceWorld is a world with one sqlite slice (migrate makes a table, seed
// puts a row in it) and one long-lived worker.
const sliceWorld = `
[project]
name = "faults"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "sqlite3 \"${db.path}\" 'CREATE TABLE items (note TEXT)'"
seed    = "sqlite3 \"${db.path}\" \"INSERT INTO items VALUES ('seeded')\""

[services.worker]
cmd        = "exec sleep 100771"
depends_on = ["db"]
`

func needSQLite3(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sqlite3 (Debian package sqlite3) is not installed: CI must have it")
		}
		t.Skip("sqlite3 (Debian package sqlite3) is not installed")
	}
}

// sqliteRows counts the rows of items in the slice at path, or -1 when the
// table (or the file) is missing.
func sqliteRows(t *testing.T, path string) int {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return -1
	}
	out, err := exec.Command("sqlite3", path, "SELECT count(*) FROM items").CombinedOutput()
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return -1
	}
	return n
}

func slicePath(t *testing.T, e *env, worktree string) string {
	t.Helper()
	return strings.TrimPrefix(e.status().world(t, worktree).service(t, "db").Address, "sqlite://")
}

func daemonPid(t *testing.T, e *env) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.home, "daemon.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func kill9Daemon(t *testing.T, e *env) {
	t.Helper()
	pid := daemonPid(t, e)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 daemon %d: %v", pid, err)
	}
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// marked lists live processes carrying a marker of e's project that goes
// on with rest (worktree/service…; "" for any of the project), and
// running in e's directories (a process another test run left behind is
// not this test's).
func marked(e *env, rest string) []int {
	prefix := e.project + "/" + rest
	base := filepath.Dir(e.repo)
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || !alive(pid) {
			continue
		}
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err != nil || !strings.HasPrefix(cwd, base) {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && strings.Contains("\x00"+string(env), "\x00BINKY_SERVICE="+homeIDOf(e.home)+"/"+prefix) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Item 1: a second clone with the same [project] name is refused at up, and
// cannot reach the first clone's worlds.
func TestSecondCloneOfProjectRefused(t *testing.T) {
	needSQLite3(t)
	e := newEnv(t, sliceWorld)
	e.must("up", "-q", "feat/login")
	wt := worldOf(t, e, "feat/login")
	path := slicePath(t, e, wt)

	clone := filepath.Join(filepath.Dir(e.repo), "repo2")
	if out, err := exec.Command("git", "clone", "-q", e.repo, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	r := e.binkyIn(clone, "up", "feat/login")
	if r.code == 0 {
		t.Fatalf("up in a second clone with the same project name succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{e.repo, clone, "name"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("refusal does not mention %q:\n%s", want, r.stderr)
		}
	}
	r = e.binkyIn(clone, "remove", "--force", "feat/login")
	if r.code == 0 {
		t.Fatalf("remove from the second clone removed the first clone's world:\n%s", r.stdout)
	}
	w := e.status().world(t, wt)
	if w.State != "up" {
		t.Errorf("first clone's world is %s after the second clone's remove; want up", w.State)
	}
	if sqliteRows(t, path) != 1 {
		t.Errorf("first clone's slice lost its row after the second clone's attempts")
	}
	if _, err := os.Stat(w.Path); err != nil {
		t.Errorf("first clone's worktree is gone: %v", err)
	}
	var raw struct {
		Worlds []struct{ Repo string } `json:"worlds"`
	}
	json.Unmarshal([]byte(e.must("status", "--json").stdout), &raw)
	if len(raw.Worlds) == 0 || raw.Worlds[0].Repo != e.repo {
		t.Errorf("status --json does not show the world's repository %s: %+v", e.repo, raw.Worlds)
	}
	if out := e.must("status").stdout; !strings.Contains(out, e.repo) {
		t.Errorf("status does not show the project's repository:\n%s", out)
	}
}

// Item 2: a remove refused by a lock changes nothing; a remove cut short by
// a killed daemon loses nothing and finishes when run again; a slice that
// vanished from the server is rebuilt by up, which says so.
func TestRefusedRemoveChangesNothing(t *testing.T) {
	needSQLite3(t)
	e := newEnv(t, sliceWorld)
	e.must("up", "-q", "t")
	wt := worldOf(t, e, "t")
	path := slicePath(t, e, wt)
	w := e.status().world(t, wt)
	e.git("worktree", "lock", w.Path)
	r := e.binky("remove", "t")
	if r.code == 0 {
		t.Fatal("remove of a locked worktree succeeded")
	}
	if !strings.Contains(r.stderr, "locked") {
		t.Errorf("refusal does not say the worktree is locked:\n%s", r.stderr)
	}
	if n := sqliteRows(t, path); n != 1 {
		t.Fatalf("refused remove changed the slice: %d rows; want 1", n)
	}
	if st := e.status().world(t, wt); st.State != "up" || st.service(t, "worker").State != "running" {
		t.Errorf("refused remove changed the world: %+v", st)
	}
	e.git("worktree", "unlock", w.Path)

	// A slice dropped behind binky's back is rebuilt, and up says so.
	e.must("down", "t")
	os.Remove(path)
	r = e.must("up", "t")
	if !strings.Contains(r.stderr+r.stdout, "gone") {
		t.Errorf("up did not say the slice had vanished:\n%s%s", r.stdout, r.stderr)
	}
	if n := sqliteRows(t, path); n != 1 {
		t.Errorf("vanished slice not rebuilt: %d rows; want 1", n)
	}
	if countAll(t, e, "slice_vanished") != 1 {
		t.Errorf("want one slice_vanished event")
	}

	// Now remove for real and finish it.
	e.must("remove", "t")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("slice %s survives remove: %v", path, err)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Errorf("worktree %s survives remove: %v", w.Path, err)
	}
}

// Item 2, the daemon killed mid-remove: nothing is lost, and the world is
// still reachable to finish (or undo) the remove.
func TestRemoveCutShortFinishesLater(t *testing.T) {
	needSQLite3(t)
	e := newEnv(t, sliceWorld+`
[services.stubborn]
cmd          = "trap '' TERM; while true; do sleep 0.1; done"
stop_timeout = "3s"
`)
	e.must("up", "-q", "t")
	wt := worldOf(t, e, "t")
	path := slicePath(t, e, wt)
	wpath := e.status().world(t, wt).Path
	done := make(chan result, 1)
	go func() { done <- e.binky("remove", "--force", "t") }()
	// The stubborn service holds remove in its stop for 3s: kill the daemon
	// then.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(read(filepath.Join(e.home, "events.log")), `"down_started"`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	kill9Daemon(t, e)
	if r := <-done; r.code == 0 {
		t.Fatalf("remove reported success although its daemon was killed")
	}
	if n := sqliteRows(t, path); n != 1 {
		t.Fatalf("remove cut short lost the slice: %d rows; want 1", n)
	}
	st := e.status().world(t, wt)
	if st.State != "removing" {
		t.Errorf("world after a cut-short remove is %q; want removing", st.State)
	}
	e.must("remove", "--force", "t")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("slice %s survives the finished remove: %v", path, err)
	}
	if _, err := os.Stat(wpath); !os.IsNotExist(err) {
		t.Errorf("worktree %s survives the finished remove: %v", wpath, err)
	}
	if left := marked(e, wt+"/"); len(left) > 0 {
		t.Errorf("processes of the removed world still run: %v", left)
	}
}

// Item 2: an up that fails after provisioning records the slice, so remove
// drops it, and the next up rebuilds it from scratch.
func TestFailedMigrateLeavesNoOrphan(t *testing.T) {
	needSQLite3(t)
	e := newEnv(t, `
[project]
name = "faults"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "sqlite3 \"${db.path}\" 'CREATE TABLE items (note TEXT)' && test -e ok-to-migrate"
`)
	r := e.binky("up", "t")
	if r.code == 0 {
		t.Fatal("up with a failing migrate succeeded")
	}
	dir := filepath.Join(e.home, "data", "sqlite")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.db"))
	if len(files) != 1 {
		t.Fatalf("want the half-made slice on disk; found %v", files)
	}
	st := e.status().world(t, worldOf(t, e, "t"))
	if st.State != "failed" {
		t.Errorf("world after a failed migrate is %s; want failed", st.State)
	}
	// The next up starts from a clean slice: CREATE TABLE would fail on
	// the half-migrated one.
	os.WriteFile(filepath.Join(st.Path, "ok-to-migrate"), nil, 0o644)
	e.must("up", "t")
	e.must("remove", "--force", "t")
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "*.db")); len(files) != 0 {
		t.Errorf("remove left slices behind: %v", files)
	}
}

// Item 3: with the disk full, down fails instead of reporting a stop the
// registry never recorded.
func TestDownOnFullDiskIsRefusedOrDurable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	base := t.TempDir()
	mnt := filepath.Join(base, "small")
	os.MkdirAll(mnt, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount tmpfs as root in CI: %v %s", err, out)
		}
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	e := newEnv(t, `
[project]
name = "full"
port_range = PORTRANGE

[services.ticker]
cmd = "exec sleep 100772"
`)
	e.home = filepath.Join(mnt, "home")
	e.must("up", "-q", "t")
	wt := worldOf(t, e, "t")
	// Fill the disk.
	filler, _ := os.Create(filepath.Join(mnt, "filler"))
	buf := make([]byte, 1<<16)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	r := e.binky("down", "t")
	os.Remove(filepath.Join(mnt, "filler"))
	kill9Daemon(t, e)
	st := e.status().world(t, wt)
	if r.code == 0 {
		// Acknowledged: it must be durable across a daemon restart.
		if st.State != "down" || st.service(t, "ticker").State == "running" {
			t.Fatalf("down exited 0 on a full disk, but after a restart the world is %s, ticker %s", st.State, st.service(t, "ticker").State)
		}
		t.Logf("down succeeded on the full disk (the registry had room): %s", st.State)
		return
	}
	if !strings.Contains(r.stderr, "registry") && !strings.Contains(r.stderr, "full") {
		t.Errorf("down on a full disk failed without saying why:\n%s", r.stderr)
	}
	if len(marked(e, wt+"/")) > 0 && st.service(t, "ticker").State != "running" {
		t.Errorf("after a refused down and a restart the ticker runs but status says %s", st.service(t, "ticker").State)
	}
}

// Item 4: processes of a failed up are tracked through a daemon restart:
// down ends them, a second up starts no duplicate, and down never exits 0
// while one lives.
func TestFailedUpProcessesAreNotLeaked(t *testing.T) {
	e := newEnv(t, `
[project]
name = "leaky"
port_range = PORTRANGE

[services.worker]
cmd = "exec sleep 100773"

[services.api]
cmd    = "exec sleep 100774"
ports  = ["http"]
health = { tcp = "127.0.0.1:${self.port}", timeout = "1s", interval = "100ms" }
restart = "never"
`)
	if r := e.binky("up", "t"); r.code == 0 {
		t.Fatal("up with a failing health check succeeded")
	}
	wt := worldOf(t, e, "t")
	prefix := wt + "/"
	if n := len(marked(e, prefix+"worker")); n != 1 {
		t.Fatalf("want the worker running after the failed up; %d found", n)
	}
	kill9Daemon(t, e)
	st := e.status().world(t, wt) // a new daemon, which must adopt the worker
	if s := st.service(t, "worker"); s.State != "running" || s.Pid == 0 {
		t.Errorf("worker of a failed world not adopted after a restart: %+v", s)
	}
	e.binky("up", "t") // fails again on api's health, must not start a second worker
	if n := len(marked(e, prefix+"worker")); n != 1 {
		t.Errorf("%d workers run after a second up; want 1", n)
	}
	kill9Daemon(t, e)
	e.must("down", "t")
	if left := marked(e, prefix); len(left) > 0 {
		t.Errorf("down exited 0 while processes of the world live: %v", left)
	}
	if st := e.status().world(t, wt); st.State != "down" {
		t.Errorf("world after down is %s", st.State)
	}
}

// Item 4: stopping finds marked processes the supervisor never knew (a
// migrate left running by a killed daemon), and remove ends them before it
// deletes the worktree.
func TestRemoveEndsOrphanedMigrate(t *testing.T) {
	e := newEnv(t, `
[project]
name = "orphan"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "exec sleep 100775"
timeout = "1m"
`)
	done := make(chan result, 1)
	go func() { done <- e.binky("up", "t") }()
	deadline := time.Now().Add(20 * time.Second)
	for len(marked(e, "")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(marked(e, "")) == 0 {
		t.Fatal("migrate never started")
	}
	kill9Daemon(t, e)
	<-done
	if len(marked(e, "")) == 0 {
		t.Fatal("want the migrate to outlive the killed daemon (its own process group)")
	}
	e.must("remove", "--force", "t")
	if left := marked(e, ""); len(left) > 0 {
		t.Errorf("remove left the orphaned migrate running: %v", left)
	}
}

// Item 6: two services whose adapters are aliases of one implementation
// get a slice each.
func TestAliasesGetTheirOwnSlices(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	e := newEnv(t, `
[project]
name = "`+runName("alias")+`"
port_range = PORTRANGE

[services.a]
adapter   = "postgres"
admin_url = "postgres://postgres@127.0.0.1:5432/postgres"

[services.b]
adapter   = "postgresql"
admin_url = "postgres://postgres@127.0.0.1:5432/postgres"
`)
	e.must("up", "-q", "t")
	w := e.status().world(t, worldOf(t, e, "t"))
	a, b := w.service(t, "a").Address, w.service(t, "b").Address
	if a == b {
		t.Errorf("postgres and postgresql services share one slice: %s", a)
	}
	e.must("remove", "--force", "t")
	for _, u := range []string{a, b} {
		db := u[strings.LastIndexByte(u, '/')+1:]
		if i := strings.IndexByte(db, '?'); i >= 0 {
			db = db[:i]
		}
		out, _ := exec.Command("psql", "-qXAt", "postgres://postgres@127.0.0.1:5432/postgres", "-c", "SELECT 1 FROM pg_database WHERE datname = '"+db+"'").Output()
		if strings.TrimSpace(string(out)) == "1" {
			t.Errorf("database %s survives remove", db)
		}
	}
}

// Item 7: CLI calls at the same instant with no daemon running all succeed.
func TestStartRaceNoDaemon(t *testing.T) {
	e := newEnv(t, `
[project]
name = "race"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 100776"
`)
	for trial := 0; trial < 4; trial++ {
		var wg sync.WaitGroup
		res := make([]result, 6)
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					res[i] = e.binky("status")
				} else {
					res[i] = e.binky("up", "-q", fmt.Sprintf("r%d", trial))
				}
			}()
		}
		wg.Wait()
		for i, r := range res {
			if r.code != 0 {
				t.Errorf("trial %d call %d: exit %d: %s", trial, i, r.code, r.stderr)
			}
		}
		e.binky("daemon", "stop")
	}
}

// Item 10: a kept port taken by an outsider while the world was down: up
// names the holder and moves the world to free ports.
func TestKeptPortTakenMovesBlock(t *testing.T) {
	e := newEnv(t, `
[project]
name = "ports"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 -m http.server --bind 127.0.0.1 ${self.port}"
ports  = ["http"]
health = { tcp = "127.0.0.1:${self.port}", timeout = "10s" }
`)
	e.must("up", "-q", "t")
	wt := worldOf(t, e, "t")
	port := e.status().world(t, wt).service(t, "web").Port
	e.must("down", "t")
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("take port %d: %v", port, err)
	}
	defer l.Close()
	r := e.must("up", "t")
	if !strings.Contains(r.stderr, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("up does not name the holder of port %d (pid %d):\n%s", port, os.Getpid(), r.stderr)
	}
	st := e.status().world(t, wt)
	if p := st.service(t, "web").Port; p == port || st.service(t, "web").State != "running" {
		t.Errorf("web after up: port %d (held one %d), state %s", p, port, st.service(t, "web").State)
	}
	if countAll(t, e, "ports_held") == 0 {
		t.Errorf("no ports_held event")
	}
}

// Item 11: state that does not lie — a service that gave up makes its world
// degraded or failed; a failed up (unknown adapter) leaves a world status
// shows and remove reaches; old errors leave running services.
func TestStateTellsTheTruth(t *testing.T) {
	e := newEnv(t, `
[project]
name = "truth"
port_range = PORTRANGE

[services.ok]
cmd = "exec sleep 100777"

[services.flaky]
cmd     = "sleep 0.3; exit 3"
restart = "never"
`)
	e.must("up", "-q", "t")
	wt := worldOf(t, e, "t")
	deadline := time.Now().Add(10 * time.Second)
	var st worldJSON
	for time.Now().Before(deadline) {
		st = e.status().world(t, wt)
		if st.service(t, "flaky").State != "running" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.State != "degraded" {
		t.Errorf("world with a failed service is %q; want degraded (services %+v)", st.State, st.Services)
	}
	if !strings.Contains(e.must("status").stdout, "degraded") {
		t.Errorf("text status does not say degraded")
	}
	e.must("remove", "--force", "t")

	// A failed up that never reached its slices is still a world.
	bad := filepath.Join(e.repo, "binky.toml")
	os.WriteFile(bad, []byte(strings.Replace(read(bad), "[services.flaky]", "[services.db]\nadapter = \"nosuchadapter\"\n\n[services.flaky]", 1)), 0o644)
	e.git("commit", "-qam", "bad adapter")
	if r := e.binky("up", "u"); r.code == 0 {
		t.Fatal("up with an unknown adapter succeeded")
	}
	wu := worldOf(t, e, "u")
	sw := e.status().world(t, wu)
	if sw.State != "failed" {
		t.Errorf("world of a failed up is %q; want failed", sw.State)
	}
	e.must("remove", "--force", "u")
	if _, err := os.Stat(sw.Path); !os.IsNotExist(err) {
		t.Errorf("worktree %s of the failed up survives remove: %v", sw.Path, err)
	}
}

// Issue 19: a service that double-forks a daemon into a session of its
// own with a clean environment (no marker) is still ended by down, through
// the world's cgroup, where the machine has a writable cgroup v2.
func TestDownEndsEscapedDaemon(t *testing.T) {
	e := newEnv(t, `
[project]
name = "escape"
port_range = PORTRANGE

[services.forker]
cmd = "(env -i setsid sh -c 'exec sleep 100781' &) ; exec sleep 100782"
`)
	e.must("up", "-q", "t")
	var escaped []int
	deadline := time.Now().Add(5 * time.Second)
	for len(escaped) == 0 && time.Now().Before(deadline) {
		escaped = escapees(e, "100781") // this test's own, not another run's
		time.Sleep(20 * time.Millisecond)
	}
	if len(escaped) == 0 {
		t.Fatal("the escaped daemon never started")
	}
	if !strings.Contains(e.daemonLog(), "tracked by cgroup v2") {
		for _, p := range escaped {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("no cgroup tracking on a root CI machine:\n%s", e.daemonLog())
		}
		t.Skip("no writable cgroup v2 here: an escaped process without the marker is not tracked (docs/supervision.md)")
	}
	e.must("down", "t")
	for _, p := range escaped {
		if alive(p) {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("escaped daemon %d survived down", p)
		}
	}
}

// A daemon killed between starting a service and recording it leaves a
// process no registry knows (found by the reliability kill storm: two
// workers for one service). The next up ends it instead of running the
// service twice.
func TestUpEndsUnrecordedStray(t *testing.T) {
	e := newEnv(t, `
[project]
name = "strays"
port_range = PORTRANGE

[services.worker]
cmd = "exec sleep 100786"
`)
	e.must("status") // starts the daemon, which makes the home's id
	stray := exec.Command("sleep", "100786")
	stray.Dir = e.repo
	stray.Env = append(os.Environ(), "BINKY_SERVICE="+homeIDOf(e.home)+"/"+e.project+"/t/worker")
	stray.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	go stray.Wait()
	defer stray.Process.Kill()
	e.must("up", "-q", "t")
	deadline := time.Now().Add(5 * time.Second)
	for alive(stray.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(stray.Process.Pid) {
		t.Errorf("the unrecorded stray %d still runs beside the new worker", stray.Process.Pid)
	}
	if n := len(marked(e, "t/worker")); n != 1 {
		t.Errorf("%d workers run; want 1", n)
	}
}
