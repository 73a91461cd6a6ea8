//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

// Every interrupted or failed step converges (issue 25): a daemon killed
// in the middle of reset, setup, verify or a golden build leaves nothing
// running that nobody waits for, a world that says what happened, and a
// state the next verb finishes; golden drop goes on past a template it
// cannot drop; remove reaches a slice whose service left binky.toml, and
// --force forgets one on a server it cannot reach, saying where.

// holdStep is a shell fragment that, while the file $HOLD/hold-<step>
// exists, says it is there (touching $HOLD/in-<step>, writing its pid)
// and waits: the test kills the daemon at exactly that point, with no
// timing involved.
func holdStep(step string) string {
	return fmt.Sprintf(`if [ -f "$HOLD/hold-%[1]s" ]; then echo $$ > "$HOLD/in-%[1]s"; while [ -f "$HOLD/hold-%[1]s" ]; do sleep 0.05; done; fi`, step)
}

// convergeWorld has a slice whose migrate and seed can be held, and an
// app whose start-up state lives in the slice (it records its boot there),
// so a slice replaced under it shows. Every sqlite3 waits for a lock
// (.timeout): the health probe's reads race the app's insert, and without
// it a busy machine made the insert fail with "database is locked".
var convergeWorld = `
[project]
name = "conv"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = '''sqlite3 "${db.path}" 'CREATE TABLE IF NOT EXISTS boot (pid TEXT)'; ` + holdStep("migrate") + `'''
seed    = '''` + holdStep("seed") + `'''

[services.app]
cmd        = '''sqlite3 -cmd ".timeout 30000" "${db.path}" "INSERT INTO boot VALUES ('$$')"; exec sleep 100555'''
depends_on = ["db"]
health     = { exec = '''test "$(sqlite3 -cmd ".timeout 30000" "${db.path}" 'SELECT count(*) FROM boot')" -ge 1''' }

[worktree]
setup = ['''echo "start $$" >> "$HOLD/setup.log"; ` + holdStep("setup") + `; echo "end $$" >> "$HOLD/setup.log"''']

[agents]
verify = ['''echo $$ > "$HOLD/verify.pid"; exec sleep 100556''']
`

// holdEnv is a test env whose commands find $HOLD.
func holdEnv(t *testing.T, config string) (*env, string) {
	t.Helper()
	needSQLite3(t)
	e := newEnv(t, config)
	hold := t.TempDir()
	e.extra = append(e.extra, "HOLD="+hold)
	return e, hold
}

// waitForFile waits for path to exist; the bound only catches a hang.
func waitForFile(t *testing.T, e *env, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared\ndaemon log:\n%s", path, e.daemonLog())
}

// pidIn reads the pid a held step wrote. The shell creates the file
// before it writes the pid into it, so an empty or unterminated file is
// read again until the line is whole.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(path)
		if strings.HasSuffix(string(b), "\n") {
			break
		}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid in %s: %q", path, b)
	}
	return pid
}

// statusRaw is status --json with the fields these tests read.
type convStatus struct {
	Worlds []struct {
		Worktree string `json:"worktree"`
		State    string `json:"state"`
		Reason   string `json:"reason"`
		Services []struct {
			Name    string   `json:"name"`
			State   string   `json:"state"`
			Pid     int      `json:"pid"`
			Reason  string   `json:"reason"`
			LogTail []string `json:"log_tail"`
		} `json:"services"`
	} `json:"worlds"`
}

func convStatusOf(t *testing.T, e *env) convStatus {
	t.Helper()
	var s convStatus
	if err := json.Unmarshal([]byte(e.must("status", "--json").stdout), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func eventsOf(e *env, name string) []string {
	var out []string
	for _, l := range strings.Split(read(filepath.Join(e.home, "events.log")), "\n") {
		if strings.Contains(l, `"event":"`+name+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// reset killed while the slice is being rebuilt (in migrate, then in
// seed): the app was stopped before its slice was dropped; after the
// restart the held step is ended, the world is degraded and says why, and
// the next up rebuilds the slice and starts the app against it.
func TestResetKilledMidwayConverges(t *testing.T) {
	for _, step := range []string{"migrate", "seed"} {
		t.Run(step, func(t *testing.T) {
			e, hold := holdEnv(t, convergeWorld)
			e.must("up", "-q", "w")
			st := e.status().world(t, "w")
			app := st.service(t, "app").Pid
			db := strings.TrimPrefix(st.service(t, "db").Address, "sqlite://")

			os.WriteFile(filepath.Join(hold, "hold-"+step), nil, 0o644)
			done := make(chan result, 1)
			go func() { done <- e.binky("reset", "-q", "w") }()
			waitForFile(t, e, filepath.Join(hold, "in-"+step))
			held := pidIn(t, filepath.Join(hold, "in-"+step))
			if alive(app) {
				t.Errorf("the app (pid %d) still runs while its slice is being reset; want it stopped first", app)
			}
			kill9Daemon(t, e)
			if r := <-done; r.code == 0 {
				t.Fatalf("reset answered ok though its daemon was killed mid-%s", step)
			}

			// A new daemon: the held run is ended, the world says why.
			s := convStatusOf(t, e)
			if alive(held) {
				t.Errorf("the %s (pid %d) a killed reset left still runs after the daemon restarted", step, held)
			}
			if left := marked(e, "w/db#"); len(left) > 0 {
				t.Errorf("processes of the killed reset still run: %v", left)
			}
			if len(s.Worlds) != 1 || s.Worlds[0].State != "degraded" || !strings.Contains(s.Worlds[0].Reason, "db") {
				t.Fatalf("after a reset killed mid-%s: %+v; want the world degraded, naming db", step, s.Worlds)
			}
			if len(eventsOf(e, "hook_ended")) == 0 || len(eventsOf(e, "slice_interrupted")) == 0 {
				t.Errorf("no hook_ended or slice_interrupted event:\n%s", read(filepath.Join(e.home, "events.log")))
			}

			// up is not "nothing to do": it rebuilds and restarts.
			os.Remove(filepath.Join(hold, "hold-"+step))
			r := e.must("up", "w")
			if strings.Contains(r.stdout, "nothing to do") {
				t.Fatalf("up after a killed reset did nothing:\n%s", r.stdout)
			}
			after := e.status().world(t, "w")
			if after.State != "up" {
				t.Fatalf("world %s after up; want up", after.State)
			}
			napp := after.service(t, "app")
			if napp.State != "running" || napp.Pid == app || !alive(napp.Pid) {
				t.Errorf("app after up: %s pid %d (was %d); want running again, restarted", napp.State, napp.Pid, app)
			}
			// The rebuilt slice holds the app's new boot only.
			out, err := exec.Command("sqlite3", db, "SELECT count(*) FROM boot").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "1" {
				t.Errorf("boot rows in the rebuilt slice: %q, %v; want 1 (the restarted app's)", out, err)
			}
		})
	}
}

// reset that completes restarts the app that depends on the slice, which
// records its boot in the new slice; --no-restart leaves it running.
func TestResetRestartsDependents(t *testing.T) {
	e, _ := holdEnv(t, convergeWorld)
	e.must("up", "-q", "w")
	st := e.status().world(t, "w")
	app := st.service(t, "app").Pid
	db := strings.TrimPrefix(st.service(t, "db").Address, "sqlite://")
	e.must("reset", "-q", "w")
	napp := e.status().world(t, "w").service(t, "app")
	if napp.Pid == app || napp.State != "running" {
		t.Fatalf("app after reset: %s pid %d (was %d); want restarted and running", napp.State, napp.Pid, app)
	}
	out, _ := exec.Command("sqlite3", db, "SELECT count(*) FROM boot").CombinedOutput()
	if strings.TrimSpace(string(out)) != "1" {
		t.Errorf("boot rows after reset: %q; want 1 (the restarted app wrote its start-up state again)", out)
	}
	e.must("reset", "-q", "--no-restart", "w")
	if p := e.status().world(t, "w").service(t, "app").Pid; p != napp.Pid {
		t.Errorf("reset --no-restart restarted the app (pid %d, was %d)", p, napp.Pid)
	}
}

// setup killed midway: the next daemon ends it, and the next up runs it
// once, never beside the first.
func TestSetupKilledMidwayConverges(t *testing.T) {
	e, hold := holdEnv(t, convergeWorld)
	os.WriteFile(filepath.Join(hold, "hold-setup"), nil, 0o644)
	done := make(chan result, 1)
	go func() { done <- e.binky("up", "-q", "w") }()
	waitForFile(t, e, filepath.Join(hold, "in-setup"))
	first := pidIn(t, filepath.Join(hold, "in-setup"))
	kill9Daemon(t, e)
	<-done
	e.must("status")
	if alive(first) {
		t.Fatalf("the setup (pid %d) a killed daemon left still runs after the restart", first)
	}
	os.Remove(filepath.Join(hold, "hold-setup"))
	e.must("up", "-q", "w")
	log := read(filepath.Join(hold, "setup.log"))
	starts, ends := strings.Count(log, "start "), strings.Count(log, "end ")
	if starts != 2 || ends != 1 || strings.Contains(log, fmt.Sprintf("end %d", first)) {
		t.Errorf("setup log:\n%s\nwant the killed run started and never ended, then one full run", log)
	}
	if n := len(eventsOf(e, "hook_ended")); n == 0 {
		t.Errorf("no hook_ended event for the setup left running")
	}
}

// verify killed midway: its check is ended by the next daemon, not left
// running untracked.
func TestVerifyKilledMidwayConverges(t *testing.T) {
	e, hold := holdEnv(t, convergeWorld)
	e.must("up", "-q", "w")
	done := make(chan result, 1)
	go func() { done <- e.binky("verify", "w") }()
	waitForFile(t, e, filepath.Join(hold, "verify.pid"))
	check := pidIn(t, filepath.Join(hold, "verify.pid"))
	kill9Daemon(t, e)
	<-done
	e.must("status")
	if alive(check) {
		t.Fatalf("the verify check (pid %d) a killed daemon left still runs", check)
	}
	if left := marked(e, "w/verify#"); len(left) > 0 {
		t.Errorf("verify processes left: %v", left)
	}
}

// a golden build killed midway is listed (building), dropped by golden
// drop --project with nothing left on disk, and built whole by the next up.
func TestGoldenBuildKilledMidwayConverges(t *testing.T) {
	e, hold := holdEnv(t, strings.Replace(convergeWorld, `seed    = '''`, `clone_from = "golden"
seed    = '''`, 1))
	os.WriteFile(filepath.Join(hold, "hold-migrate"), nil, 0o644)
	done := make(chan result, 1)
	go func() { done <- e.binky("up", "-q", "w") }()
	waitForFile(t, e, filepath.Join(hold, "in-migrate"))
	kill9Daemon(t, e)
	<-done

	var list struct {
		Templates []struct{ Name, State string } `json:"templates"`
	}
	if err := json.Unmarshal([]byte(e.must("golden", "list", "--json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Templates) != 1 || list.Templates[0].State != "building" {
		t.Fatalf("golden list after a build killed midway: %+v; want one template, building", list.Templates)
	}
	tmpl := list.Templates[0].Name
	files, _ := filepath.Glob(filepath.Join(e.home, "data", "sqlite", "*", tmpl+"*"))
	if len(files) == 0 {
		t.Fatalf("the half-built template %s is not on disk; the test cannot tell a drop", tmpl)
	}
	e.must("golden", "drop", "--project", e.project)
	if files, _ := filepath.Glob(filepath.Join(e.home, "data", "sqlite", "*", tmpl+"*")); len(files) > 0 {
		t.Errorf("golden drop left the half-built template's files: %v", files)
	}
	os.Remove(filepath.Join(hold, "hold-migrate"))
	e.must("up", "-q", "w")
	list.Templates = nil // a reused element keeps fields the new JSON leaves out
	if err := json.Unmarshal([]byte(e.must("golden", "list", "--json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Templates) != 1 || list.Templates[0].State != "" {
		t.Errorf("golden list after the next up: %+v; want one ready template\nevents:\n%s\ndaemon log:\n%s", list.Templates, read(filepath.Join(e.home, "events.log")), e.daemonLog())
	}
}

// golden drop --project goes on past a template it cannot drop (here one
// another home claims), reports each result and exits non-zero.
func TestGoldenDropProjectGoesOnPastFailures(t *testing.T) {
	e, _ := holdEnv(t, strings.Replace(convergeWorld, `seed    = '''`, `clone_from = "golden"
inputs  = ["input.txt"]
seed    = '''`, 1))
	os.WriteFile(filepath.Join(e.repo, "input.txt"), []byte("one"), 0o644)
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "input one")
	e.must("up", "-q", "a")
	os.WriteFile(filepath.Join(e.repo, "input.txt"), []byte("two"), 0o644)
	e.git("commit", "-qam", "input two")
	e.must("up", "-q", "b")
	var list struct {
		Templates []struct{ Name, State, Error string } `json:"templates"`
	}
	json.Unmarshal([]byte(e.must("golden", "list", "--json").stdout), &list)
	if len(list.Templates) != 2 {
		t.Fatalf("want two templates (two input states); got %+v", list.Templates)
	}
	// The first template (by name) is claimed by another home now.
	claimed := list.Templates[0].Name
	claims, _ := filepath.Glob(filepath.Join(e.home, "data", "sqlite", "*", claimed+".db.binky-owner"))
	if len(claims) != 1 {
		t.Fatalf("no claim file for %s", claimed)
	}
	os.WriteFile(claims[0], []byte("binky-owner:ffffffffffffffff /elsewhere uid 0"), 0o644)
	r := e.binky("golden", "drop", "--project", e.project)
	if r.code == 0 {
		t.Fatalf("golden drop --project with an undroppable template exited 0:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "NOT dropped "+claimed) || !strings.Contains(r.stdout, "dropped "+list.Templates[1].Name) {
		t.Errorf("golden drop output does not report each template:\n%s\n%s", r.stdout, r.stderr)
	}
	list.Templates = nil
	json.Unmarshal([]byte(e.must("golden", "list", "--json").stdout), &list)
	if len(list.Templates) != 1 || list.Templates[0].Name != claimed {
		t.Errorf("after the drop: %+v; want only %s left", list.Templates, claimed)
	}
	os.Remove(claims[0]) // let cleanup drop it
}

// A service whose slice failed to provision (its server unreachable) and
// that was then deleted from binky.toml: remove says what to do, and
// remove --force forgets the slice, naming where it is left.
func TestRemoveForceForgetsUnreachableSlice(t *testing.T) {
	e, _ := holdEnv(t, convergeWorld+`
[services.pg]
adapter   = "postgres"
admin_url = "postgres://postgres@127.0.0.1:1/postgres"
`)
	if r := e.binky("up", "-q", "w"); r.code == 0 {
		t.Fatal("up with an unreachable server succeeded")
	}
	w := e.status().world(t, "w")
	// status says why the world failed.
	if cs := convStatusOf(t, e); len(cs.Worlds) != 1 || cs.Worlds[0].State != "failed" || !strings.Contains(cs.Worlds[0].Reason, "pg") || !strings.Contains(cs.Worlds[0].Reason, "provision") {
		t.Errorf("status of the failed world: %+v; want failed, with a reason naming the provision of pg", cs.Worlds)
	}
	if pg := e.status().world(t, "w").service(t, "pg"); pg.State != "failed" {
		t.Errorf("the slice that could not be provisioned is %q; want failed, with its reason", pg.State)
	}
	for _, sv := range convStatusOf(t, e).Worlds[0].Services {
		if sv.Name == "pg" && (!strings.HasPrefix(sv.Reason, "provisioning failed") || !strings.Contains(sv.Reason, "127.0.0.1:1")) {
			t.Errorf("reason of the slice on an unreachable server: %q; want provisioning failed, naming the server", sv.Reason)
		}
	}
	if out := e.must("status").stdout; !strings.Contains(out, "why:") {
		t.Errorf("status text does not say why the world failed:\n%s", out)
	}
	// The service leaves binky.toml.
	os.WriteFile(filepath.Join(w.Path, "binky.toml"), []byte(e.render(convergeWorld)), 0o644)
	r := e.binky("remove", "w")
	if r.code == 0 {
		t.Fatal("remove of a slice on an unreachable server succeeded without --force")
	}
	if !strings.Contains(r.stderr, "--force") || strings.Contains(r.stderr, "***") {
		t.Errorf("the refusal should point at --force and redact nothing of its own hint:\n%s", r.stderr)
	}
	r = e.binky("remove", "--force", "w")
	if r.code != 0 {
		t.Fatalf("remove --force: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "127.0.0.1:1") || !strings.Contains(r.stderr, "pg") {
		t.Errorf("remove --force does not say which slice it left on which server:\n%s", r.stderr)
	}
	if s := e.status(); len(s.Worlds) != 0 {
		t.Errorf("worlds after remove --force: %+v", s.Worlds)
	}
	if len(eventsOf(e, "slice_left")) != 1 {
		t.Errorf("want one slice_left event")
	}
}

// A service deleted from binky.toml after its slice was made: remove
// destroys the slice on its server with the settings recorded with it.
func TestRemoveReachesSliceOfDeletedService(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	project := runName("conv") // its slice is on the shared server
	world := strings.Replace(convergeWorld, `name = "conv"`, `name = "`+project+`"`, 1)
	e, _ := holdEnv(t, world+`
[services.pg]
adapter   = "postgres"
admin_url = "`+e2ePostgres+`"
`)
	e.must("up", "-q", "gone")
	w := e.status().world(t, "gone")
	os.WriteFile(filepath.Join(w.Path, "binky.toml"), []byte(e.render(world)), 0o644)
	e.must("remove", "--force", "-q", "gone")
	out, _ := exec.Command("psql", "-qXAt", e2ePostgres, "-c", "SELECT count(*) FROM pg_database WHERE datname LIKE '"+project+"%gone%'").CombinedOutput()
	if strings.TrimSpace(string(out)) != "0" {
		t.Errorf("the deleted service's database is still on the server after remove: %s", out)
	}
}

// A Redis server that lost the slice's user and binky's secret (a restart
// of a server that keeps nothing on disk) derives a new password at the
// next provision. up resolves on every run, so down + up hands the app
// the new credentials instead of the ones recorded at the first up.
func TestUpResolvesFreshCredentials(t *testing.T) {
	needServer(t, "Redis", "127.0.0.1:6379", "redis-server --daemonize yes --port 6379")
	if _, err := exec.LookPath("redis-cli"); err != nil {
		adaptertest.MissingServer(t, "redis-cli is not installed (Debian package redis-tools)")
	}
	// Database 9 of the server: binky's secret there is this test's alone.
	const admin = "redis://127.0.0.1:6379/9"
	e := newEnv(t, `
[project]
name = "fresh"
port_range = PORTRANGE

[services.cache]
adapter   = "redis"
admin_url = "`+admin+`"

[services.app]
cmd        = "exec sleep 100557"
depends_on = ["cache"]
health     = { exec = '''redis-cli -u "${cache.url}" SET "${cache.prefix}k" v | grep -q OK''' }
`)
	e.must("up", "-q", "w")
	before := e.status().world(t, "w").service(t, "cache").Address
	// The server forgets the slice's user and binky's key.
	user := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(before, "redis://"), ":", 2)[0], "")
	for _, args := range [][]string{{"-n", "9", "ACL", "DELUSER", user}, {"-n", "9", "DEL", "binky:adapter-secret"}} {
		if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
	}
	e.must("down", "-q", "w")
	r := e.binky("up", "w")
	if r.code != 0 {
		t.Fatalf("up after the server lost the slice's credentials: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if w := e.status().world(t, "w"); w.State != "up" || w.service(t, "app").State != "running" {
		t.Errorf("world %s, app %s; want up and running with the new credentials", w.State, w.service(t, "app").State)
	}
}
