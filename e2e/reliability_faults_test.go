//go:build linux

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stormWorld is one storm project: a sqlite slice (made by an adapter,
// migrated and seeded) and a worker.
const stormWorld = `
[project]
name = "NAME"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "sqlite3 \"${db.path}\" 'CREATE TABLE items (note TEXT)'"
seed    = "sqlite3 \"${db.path}\" \"INSERT INTO items VALUES ('seeded')\""

[services.worker]
cmd        = "exec sleep 100790"
depends_on = ["db"]
ports      = ["http"]

[worktree]
setup = ["sleep 0.3"]
`

// killDaemonNow kill -9s home's daemon when one runs, reporting whether it
// killed one.
func killDaemonNow(e *env) bool {
	b, err := os.ReadFile(filepath.Join(e.home, "daemon.pid"))
	if err != nil {
		return false
	}
	var pid int
	fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	if pid <= 0 || !alive(pid) {
		return false
	}
	if syscall.Kill(pid, syscall.SIGKILL) != nil {
		return false
	}
	for i := 0; i < 300 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func caseKillStorm(t *testing.T, tr tier, f *figure) { killStorms(t, tr, f, 1, false) }

// caseKillStormTwoHomes runs the storm in two homes at once, with the
// same project names, one port range and one port lease store: each
// home's checks count only its own processes (by its home id), and the
// other home's kills must not cost it anything.
func caseKillStormTwoHomes(t *testing.T, tr tier, f *figure) { killStorms(t, tr, f, 2, false) }

// caseKillStormTwoUsers is the two-home storm with each home a different
// throw-away Unix user's, on one root-owned lease store as a packaged host
// has it (issue 37): neither user's kills, leases or locks cost the other
// anything.
func caseKillStormTwoUsers(t *testing.T, tr tier, f *figure) {
	if os.Getuid() != 0 && os.Getenv("CI") != "true" {
		notRun(t, f, "needs root to create throw-away Unix users")
	}
	killStorms(t, tr, f, 2, true)
}

// stormStats is what one home's storm saw.
type stormStats struct {
	kills, acked, integrityOK, checks int
	ops                               map[string]int
	problems                          []string
	leaked, inCgroups                 int
	cgroupSeen                        bool
}

// killStorms runs the kill storm in homes homes side by side (projects
// storm0..2 in each, the same names in every home) and reports the sum;
// with users, each home belongs to a throw-away Unix user of its own.
func killStorms(t *testing.T, tr tier, f *figure, homes int, users bool) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		notRun(t, f, "sqlite3 CLI (Debian package sqlite3) is not installed")
	}
	sets := make([][]*env, homes)
	var shared string // with users: the one root-owned lease store
	if users {
		shared = sharedLeases(t)
	}
	for h := range homes {
		var u *unixUser
		if users {
			u = newUnixUser(t)
		}
		for i := 0; i < 3; i++ {
			cfg := strings.Replace(stormWorld, "NAME", fmt.Sprintf("storm%d", i), 1)
			if h > 0 {
				// The same port range and lease store as home 0's project.
				first := sets[0][i]
				cfg = strings.ReplaceAll(cfg, "PORTRANGE", fmt.Sprintf("[%d, %d]", first.rng[0], first.rng[1]))
			}
			var e *env
			if u != nil {
				e = newEnvAs(t, u, cfg, shared)
			} else {
				e = newEnv(t, cfg)
			}
			if i > 0 {
				e.home = sets[h][0].home
			}
			if u != nil {
				if h > 0 {
					e.rng = sets[0][i].rng
				}
			} else if h > 0 {
				e.leases, e.rng = sets[0][0].leases, sets[0][i].rng
			} else if i > 0 {
				e.leases = sets[0][0].leases
			}
			sets[h] = append(sets[h], e)
		}
	}
	start := time.Now()
	stats := make([]stormStats, homes)
	var wg sync.WaitGroup
	for h := range homes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[h] = stormOn(t, tr, sets[h], uint64(19+h))
		}()
	}
	wg.Wait()
	var sum stormStats
	sum.ops = map[string]int{}
	for _, s := range stats {
		sum.kills += s.kills
		sum.acked += s.acked
		sum.integrityOK += s.integrityOK
		sum.checks += s.checks
		sum.leaked += s.leaked
		sum.inCgroups += s.inCgroups
		sum.cgroupSeen = sum.cgroupSeen || s.cgroupSeen
		sum.problems = append(sum.problems, s.problems...)
		for k, v := range s.ops {
			sum.ops[k] += v
		}
	}
	problem := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		sum.problems = append(sum.problems, msg)
		t.Error(msg)
	}
	if sum.inCgroups > 0 {
		problem("%d processes survive in the worlds' cgroups", sum.inCgroups)
	}
	// RPC adapters whose daemon was killed under them must not outlive it.
	orphans := orphanAdapters(5 * time.Second)
	if len(orphans) > 0 {
		problem("%d adapter processes outlived their killed daemon: pid %v", len(orphans), orphans)
	}
	byCgroup := "no per-world cgroup here to count by"
	if sum.cgroupSeen {
		byCgroup = fmt.Sprintf("%d in the worlds' cgroups", sum.inCgroups)
	}
	if sum.leaked > 0 {
		problem("%d marked processes survive the final removes", sum.leaked)
	}
	if want := tr.kills * homes; sum.kills < want {
		t.Errorf("only %d of %d kills landed on a live daemon", sum.kills, want)
	}
	in := ""
	if homes > 1 {
		in = fmt.Sprintf(" across %d homes running the same project names at once", homes)
	}
	if users {
		in += ", each home another Unix user's"
	}
	f.Result = fmt.Sprintf("%d kills%s (during up %d, down %d, reset %d, remove %d; %d after the op had answered) in %s; integrity_check ok %d/%d; %d acknowledged changes, %d problems (lost, duplicate, ghost or leaked); %d processes leaked at the end by BINKY_SERVICE markers, %s, %d orphaned adapters",
		sum.kills, in, sum.ops["up"], sum.ops["down"], sum.ops["reset"], sum.ops["remove"], sum.ops["idle"], time.Since(start).Round(time.Second), sum.integrityOK, sum.checks, sum.acked, len(sum.problems), sum.leaked, byCgroup, len(orphans))
	for _, p := range sum.problems {
		f.detail("%s", p)
	}
}

// stormOn is one home's storm: tr.kills daemon kills at random points of
// up, down and remove on envs (one home, three projects), checking after
// each kill, then everything removed.
func stormOn(t *testing.T, tr tier, envs []*env, seed uint64) stormStats {
	home := envs[0]
	branches := []string{"a", "b"}
	type key struct{ project, branch string }
	want := map[key]string{}  // up, down, absent; "" when unknown
	names := map[key]string{} // worktree names seen
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), seed))
	var kills, acked, integrityOK, checks int
	var problems []string
	problem := func(format string, args ...any) {
		msg := fmt.Sprintf("home %s: %s", home.home, fmt.Sprintf(format, args...))
		problems = append(problems, msg)
		t.Error(msg)
	}
	ops := map[string]int{}
	took := map[string]time.Duration{"up": time.Second, "down": 500 * time.Millisecond, "remove": 500 * time.Millisecond, "reset": 500 * time.Millisecond}
	for iter := 0; kills < tr.kills && iter < tr.kills*3; iter++ {
		p := rng.IntN(len(envs))
		e := envs[p]
		// Branch names differ between projects: a name that is not a world
		// of the caller's project may reach another project's world.
		b := fmt.Sprintf("%s%d", branches[rng.IntN(len(branches))], p)
		k := key{e.project, b}
		var args []string
		switch r := rng.IntN(5); {
		case r < 2:
			args = []string{"up", "-q", b}
		case r == 2:
			args = []string{"down", b}
		case r == 3:
			// reset drops and rebuilds the slice under a running worker,
			// and a new worktree's first up runs [worktree] setup: both
			// are killed in the middle too.
			args = []string{"reset", "-q", b}
		default:
			args = []string{"remove", "--force", "-q", b}
		}
		done := make(chan result, 1)
		t0 := time.Now()
		go func() { done <- e.binky(args...) }()
		// Kill at a random point of the op: uniform over the time the last
		// op of its kind took.
		time.Sleep(time.Duration(rng.Int64N(int64(took[args[0]]) + 1)))
		midOp := len(done) == 0
		if killDaemonNow(home) {
			kills++
			if midOp {
				ops[args[0]]++
			} else {
				ops["idle"]++
			}
		}
		r := <-done
		if !midOp {
			took[args[0]] = time.Since(t0)
		}
		switch {
		case r.code != 0:
			want[k] = ""
		case args[0] == "reset":
			// An acknowledged reset leaves the world as it was.
		case args[0] == "up":
			want[k], acked = "up", acked+1
		case args[0] == "down":
			want[k], acked = "down", acked+1
		default:
			want[k], acked = "absent", acked+1
		}
		// The daemon is dead (killed, or never restarted after an op that
		// finished first): the registry on disk must be sound.
		killDaemonNow(home)
		checks++
		if ic := integrityCheckAs(t, home.home, home.as); strings.HasPrefix(ic, "ok") {
			integrityOK++
		} else {
			problem("kill %d (%v): integrity_check: %s", kills, args, ic)
		}
		// A new daemon re-adopts; every acknowledged change must be there.
		st := home.status()
		seen := map[key]int{}
		for _, w := range st.Worlds {
			wk := key{w.Project, w.Branch}
			seen[wk]++
			names[wk] = w.Worktree
			if i := strings.TrimSuffix(strings.TrimPrefix(w.Project, "storm"), runTag); !strings.HasPrefix(w.Project, "storm") || (w.Branch != "a"+i && w.Branch != "b"+i) {
				problem("kill %d: ghost world %s/%s (branch %q)", kills, w.Project, w.Worktree, w.Branch)
			}
			if n := countMarked(homeIDOf(home.home) + "/" + w.Project + "/" + w.Worktree + "/worker"); n > 1 {
				problem("kill %d: %d workers run for %s/%s", kills, n, w.Project, w.Worktree)
			}
		}
		for wk, n := range seen {
			if n > 1 {
				problem("kill %d: %d worlds for %s branch %s (duplicate)", kills, n, wk.project, wk.branch)
			}
		}
		for wk, state := range want {
			var got *worldJSON
			for i := range st.Worlds {
				if st.Worlds[i].Project == wk.project && st.Worlds[i].Branch == wk.branch {
					got = &st.Worlds[i]
				}
			}
			switch {
			case state == "":
			case state == "absent" && got != nil:
				problem("kill %d: %s/%s was removed (acknowledged) but status shows it %s", kills, wk.project, wk.branch, got.State)
			case state != "absent" && got == nil:
				problem("kill %d: %s/%s acknowledged %s is missing from status %+v", kills, wk.project, wk.branch, state, st.Worlds)
			case state != "absent" && got.State != state:
				problem("kill %d: %s/%s acknowledged %s is %s", kills, wk.project, wk.branch, state, got.State)
			}
			if state == "down" || state == "absent" {
				if n := names[wk]; n != "" {
					if left := marked(envs[wk.project[5]-'0'], n+"/"); len(left) > 0 {
						problem("kill %d: %s/%s acknowledged %s but processes %v run", kills, wk.project, n, state, left)
					}
				}
			}
		}
	}
	// The end: everything removed, nothing left running.
	leaked, inCgroups, cgroupSeen := 0, 0, false
	for i, e := range envs {
		for _, b := range branches {
			b += strconv.Itoa(i)
			if r := e.binky("remove", "--force", "-q", b); r.code != 0 && !strings.Contains(r.stderr, "no world") && !strings.Contains(r.stderr, "not found") && !strings.Contains(r.stderr, "no such") {
				t.Logf("final remove storm%d %s: %s", i, b, r.stderr)
			}
		}
		leaked += len(marked(e, ""))
		if n, ok := cgroupProcs(e.home, e.project); ok {
			cgroupSeen = true
			inCgroups += n
		}
	}
	if st := home.status(); len(st.Worlds) != 0 {
		problem("%d worlds survive the final removes", len(st.Worlds))
	}
	return stormStats{kills: kills, acked: acked, integrityOK: integrityOK, checks: checks, ops: ops,
		problems: problems, leaked: leaked, inCgroups: inCgroups, cgroupSeen: cgroupSeen}
}

const stampedeWorld = `
[project]
name = "herd"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 -m http.server --bind 127.0.0.1 ${self.port}"
ports  = ["http"]
health = { tcp = "127.0.0.1:${self.port}", timeout = "120s", interval = "100ms" }
`

func caseStampede(t *testing.T, tr tier, f *figure) {
	// newEnv's range (60 ports) holds a one-port block per world.
	e := newEnv(t, stampedeWorld)
	n := tr.stampede
	res := make([]result, n)
	took := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			res[i] = e.binky("up", "-q", fmt.Sprintf("s%02d", i))
			took[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	ok := 0
	for i, r := range res {
		if r.code == 0 {
			ok++
		} else {
			t.Errorf("up s%02d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	st := e.status()
	healthy := 0
	type block struct {
		name   string
		lo, hi int
	}
	var blocks []block
	for _, w := range st.Worlds {
		if w.State == "up" && w.service(t, "web").State == "running" {
			healthy++
		}
		blocks = append(blocks, block{w.Worktree, w.Ports[0], w.Ports[1]})
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].lo < blocks[j].lo })
	overlaps := 0
	for i := 1; i < len(blocks); i++ {
		if blocks[i].lo <= blocks[i-1].hi {
			overlaps++
			t.Errorf("port blocks overlap: %s %d-%d and %s %d-%d", blocks[i-1].name, blocks[i-1].lo, blocks[i-1].hi, blocks[i].name, blocks[i].lo, blocks[i].hi)
		}
	}
	if healthy != n {
		t.Errorf("%d of %d worlds up and healthy after the stampede", healthy, n)
	}
	queued := countAll(t, e, "world_queued")
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	f.Result = fmt.Sprintf("%d concurrent ups: %d succeeded (%d waited in the admission queue), %d failed; %d healthy; %d overlapping port blocks; wall time to all healthy %s (median up %s, slowest %s)",
		n, ok, queued, n-ok, healthy, overlaps, wall.Round(100*time.Millisecond), took[n/2].Round(100*time.Millisecond), took[n-1].Round(100*time.Millisecond))
}

func caseDiskFull(t *testing.T, tr tier, f *figure) {
	if os.Geteuid() != 0 {
		notRun(t, f, "mounting a 16 MiB tmpfs needs root")
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		notRun(t, f, "sqlite3 CLI (Debian package sqlite3) is not installed")
	}
	mnt := filepath.Join(t.TempDir(), "small")
	os.MkdirAll(mnt, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		notRun(t, f, fmt.Sprintf("mount tmpfs: %v %s", err, strings.TrimSpace(string(out))))
	}
	e := newEnv(t, `
[project]
name = "full"
port_range = PORTRANGE
disk_headroom = 0.001

[services.ticker]
cmd = "while true; do echo tick; sleep 0.2; done"
`)
	e.home = filepath.Join(mnt, "home")
	t.Cleanup(func() {
		os.Remove(filepath.Join(mnt, "filler"))
		e.cleanup()
		exec.Command("umount", "-l", mnt).Run()
	})
	e.must("up", "-q", "a")
	wa := worldOf(t, e, "a")
	filler, _ := os.Create(filepath.Join(mnt, "filler"))
	buf := make([]byte, 1<<16)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	up := e.binky("up", "--no-wait", "b")
	down := e.binky("down", "a")
	fullIC := integrityCheck(t, e.home)
	os.Remove(filepath.Join(mnt, "filler"))
	kill9Daemon(t, e)
	after := e.status()
	afterIC := integrityCheck(t, e.home)
	says := func(r result) string {
		if r.code == 0 {
			return "succeeded"
		}
		line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(r.stderr), "\n", 2)[0])
		clear := strings.Contains(r.stderr, "space") || strings.Contains(r.stderr, "full") || strings.Contains(r.stderr, "registry")
		if !clear {
			t.Errorf("refusal on a full disk does not say why: %s", r.stderr)
		}
		return fmt.Sprintf("refused (%q)", line)
	}
	upSays, downSays := says(up), says(down)
	aState := after.world(t, wa).State
	if down.code == 0 && aState != "down" {
		t.Errorf("down exited 0 on the full disk, but after a restart world a is %s", aState)
	}
	if !strings.HasPrefix(fullIC, "ok") || !strings.HasPrefix(afterIC, "ok") {
		t.Errorf("integrity_check: full %q, after %q", fullIC, afterIC)
	}
	// Space is back: everything works again.
	rec := e.binky("up", "-q", "b")
	reca := e.binky("up", "-q", "a")
	if rec.code != 0 || reca.code != 0 {
		t.Errorf("up after space returned: b exit %d %s; a exit %d %s", rec.code, rec.stderr, reca.code, reca.stderr)
	}
	st := e.status()
	for _, w := range st.Worlds {
		if w.State != "up" {
			t.Errorf("after recovery world %s is %s", w.Worktree, w.State)
		}
	}
	f.Result = fmt.Sprintf("disk full: up %s; down %s (after restart: %s); integrity_check %s while full, %s after; recovery: %d worlds up once space returned",
		upSays, downSays, aState, fullIC, afterIC, len(st.Worlds))
}

func caseRegistry(t *testing.T, tr tier, f *figure) {
	f.Rerun = "go test -count=1 -v -run 'TestRegistryRefusal$' ./e2e/"
	// In a subtest of its own: TestRegistryRefusal is parallel, and the
	// case's row must wait for it.
	t.Run("refusal", TestRegistryRefusal)
	f.Result = "newer user_version, a non-SQLite file, another application's SQLite (with and without application_id): each refused naming the file; bytes unchanged; no -wal/-shm created (reused TestRegistryRefusal)"
}

const soakWorld = `
[project]
name = "soak"
port_range = PORTRANGE

[services.ticker]
cmd     = "while true; do echo tick; sleep 0.5; done"
restart = "always"

[services.sleeper]
cmd     = "exec sleep 100810"
restart = "always"

[services.web]
cmd     = "exec python3 -m http.server --bind 127.0.0.1 ${self.port}"
ports   = ["http"]
health  = { tcp = "127.0.0.1:${self.port}", timeout = "60s", interval = "200ms" }
restart = "always"
`

func caseSoak(t *testing.T, tr tier, f *figure) {
	if tr.soak == 0 {
		f.Rerun = "BINKY_RELIABILITY=long BINKY_RELIABILITY_SOAK=30m " + f.Rerun
		notRun(t, f, "quick tier: the soak runs only under `make reliability` (BINKY_RELIABILITY_SOAK)")
	}
	e := newEnv(t, soakWorld)
	var worlds []string
	for i := 0; i < tr.soakWorlds; i++ {
		b := fmt.Sprintf("w%02d", i)
		e.must("up", "-q", b)
		worlds = append(worlds, b)
	}
	pid := daemonPid(t, e)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 30))
	type sample struct {
		at       time.Duration
		rss, fds int
	}
	var samples []sample
	start := time.Now()
	restarts, kills := 0, 0
	every := max(tr.soak/30, 5*time.Second)
	next := time.Duration(0)
	for time.Since(start) < tr.soak {
		if el := time.Since(start); el >= next {
			rss, fds := daemonStats(pid)
			samples = append(samples, sample{el, rss, fds})
			next += every
		}
		b := worlds[rng.IntN(len(worlds))]
		if rng.IntN(2) == 0 {
			// Kill one service: the supervisor restarts it.
			st := e.status()
			for _, w := range st.Worlds {
				if w.Branch == b && len(w.Services) > 0 {
					s := w.Services[rng.IntN(len(w.Services))]
					if s.Pid > 0 && syscall.Kill(-s.Pid, syscall.SIGKILL) == nil {
						kills++
					}
				}
			}
		} else {
			e.must("down", b)
			e.must("up", "-q", b)
			restarts++
		}
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
	}
	if now := daemonPid(t, e); now != pid {
		t.Errorf("the daemon changed during the soak: pid %d, then %d", pid, now)
	}
	rss, fds := daemonStats(pid)
	samples = append(samples, sample{time.Since(start), rss, fds})
	for _, s := range samples {
		f.detail("t=%s: daemon RSS %d KiB, %d fds", s.at.Round(time.Second), s.rss, s.fds)
	}
	// Flat: compare the last sample with the first after warm-up (a third
	// of the way in).
	base := samples[len(samples)/3]
	last := samples[len(samples)-1]
	if last.fds > base.fds+20 {
		t.Errorf("daemon fds grew from %d to %d over the soak", base.fds, last.fds)
	}
	if last.rss > base.rss*2 && last.rss-base.rss > 20<<10 {
		t.Errorf("daemon RSS grew from %d KiB to %d KiB over the soak", base.rss, last.rss)
	}
	f.Result = fmt.Sprintf("%d worlds × 3 services for %s: %d down+up restarts, %d service kills; daemon RSS %d → %d KiB, fds %d → %d (from a third of the way in to the end; first sample %d KiB, %d fds)",
		tr.soakWorlds, tr.soak, restarts, kills, base.rss, last.rss, base.fds, last.fds, samples[0].rss, samples[0].fds)
}

// cgroupProcs counts the live processes in the cgroups binky made for
// project's worlds under home (supervisor.Cgroups), and whether binky
// tracks worlds by cgroup here at all.
func cgroupProcs(home, project string) (int, bool) {
	b, _ := os.ReadFile("/proc/self/mounts")
	mnt := ""
	for _, line := range strings.Split(string(b), "\n") {
		if fs := strings.Fields(line); len(fs) >= 3 && fs[2] == "cgroup2" {
			mnt = fs[1]
		}
	}
	if mnt == "" {
		return 0, false
	}
	root := filepath.Join(mnt, "binky", "home-"+homeIDOf(home))
	if _, err := os.Stat(root); err != nil {
		return 0, false
	}
	n := 0
	procs, _ := filepath.Glob(filepath.Join(root, project, "*", "cgroup.procs"))
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && alive(pid) {
				n++
			}
		}
	}
	return n, true
}

// orphanAdapters lists this test binary's adapter processes (binky-adapter-*
// in binDir) whose parent is gone (re-parented to pid 1), waiting up to d
// for them to notice and exit.
func orphanAdapters(d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		var pids []int
		ents, _ := os.ReadDir("/proc")
		for _, ent := range ents {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || !alive(pid) {
				continue
			}
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if err != nil || filepath.Dir(exe) != binDir || !strings.HasPrefix(filepath.Base(exe), "binky-adapter-") {
				continue
			}
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
				if len(f) > 1 && f[1] == "1" {
					pids = append(pids, pid)
				}
			}
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(100 * time.Millisecond)
	}
}
