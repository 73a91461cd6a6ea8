//go:build !windows

package world

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// The in-process engine fixture: a temp registry, the real supervisor
// running sh processes, a fake adapter host (fakeAdapters) and fakes of the
// daemon's side (fakeDaemon). Each test gets its own home, port range,
// lease directory, repository and worktree. The operations are called
// through engine_ops_test.go.

// fixtureWorld is the world the engine tests bring up: a slice (db), an
// api on it whose health waits for $HOLD/go, a web on the api, and a side
// service depending on nothing.
const fixtureWorld = `
[project]
name = "fx"
port_range = PORTRANGE

[services.db]
adapter = "fake"
config = { size = "small" }

[services.api]
cmd        = 'exec sleep 100701'
depends_on = ["db"]
health     = { exec = 'touch "$HOLD/probed-api"; test -f "$HOLD/go"', interval = "20ms" }

[services.web]
cmd        = 'exec sleep 100702'
depends_on = ["api"]

[services.side]
cmd = 'exec sleep 100703'
`

// waitBound bounds every wait on a condition: it only catches a hang.
const waitBound = 30 * time.Second

type fixture struct {
	t    *testing.T
	e    *Engine
	reg  *registry.Registry
	fa   *fakeAdapters
	fd   *fakeDaemon
	repo string // the main repository, on main
	wt   string // a worktree of it, on branch feat: the world under test
	hold string // $HOLD of the world's commands and probes
	env  map[string]string
	said string // what the last operation wrote to its caller
	seen []int  // every service pid the test has seen
}

// newFixture builds an engine over a fresh home for a world of config (its
// PORTRANGE replaced by a free range), committed in a new repository, with
// a worktree on branch feat. $HOLD/go exists: health probes pass. The
// caller (or its parent test, for parallel subtests) has called
// gittest.Isolate.
func newFixture(t *testing.T, config string) *fixture {
	t.Helper()
	ctx := context.Background()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(ctx, filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	homeID, err := reg.HomeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ports.HomeIDFile), []byte(homeID+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leases, err := ports.OpenLeases(filepath.Join(base, "leases"), ports.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ports.New(reg, ports.Options{Leases: leases, HomeID: homeID, HomeDir: home})
	if err != nil {
		t.Fatal(err)
	}

	f := &fixture{t: t, reg: reg, fa: newFakeAdapters(), fd: &fakeDaemon{}, hold: filepath.Join(base, "hold")}
	if err := os.MkdirAll(f.hold, 0o755); err != nil {
		t.Fatal(err)
	}
	f.release()
	logs := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("engine log:\n%s", logs)
		}
	})
	o := Options{
		Home: home, HomeID: homeID, Registry: reg, Ports: alloc, Adapters: f.fa,
		Logger:       hclog.New(&hclog.LoggerOptions{Name: "engine", Output: logs, Level: hclog.Warn}),
		Redact:       redact.New(),
		AdmissionOff: true,
	}
	f.fd.options(&o)
	f.e = New(o)
	t.Cleanup(f.stopAll)

	lo := freePort(t)
	config = strings.ReplaceAll(config, "PORTRANGE", fmt.Sprintf("[%d, %d]", lo, lo+59))
	f.repo = gittest.Repo(t, filepath.Join(base, "repo"), "fx")
	f.write(filepath.Join(f.repo, "binky.toml"), config)
	gittest.Run(t, f.repo, "commit", "-q", "-am", "the world")
	f.wt = gittest.Worktree(t, f.repo, filepath.Join(base, "feat"), "feat")
	f.env = map[string]string{"PATH": os.Getenv("PATH"), "HOME": base, "HOLD": f.hold}
	return f
}

// upArgs are the args of an up of the worktree, as binky up sends them.
func (f *fixture) upArgs() api.UpArgs { return api.UpArgs{Dir: f.wt, Env: f.env} }

// ref names the world under test.
func (f *fixture) ref() api.WorldRef { return api.WorldRef{Dir: f.wt, Env: f.env} }

// hold makes the api's health probe fail until release.
func (f *fixture) holdHealth() { os.Remove(filepath.Join(f.hold, "go")) }

func (f *fixture) release() { f.write(filepath.Join(f.hold, "go"), "") }

func (f *fixture) write(path, text string) {
	f.t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// editConfig rewrites the worktree's binky.toml, replacing old by new, as
// a user edits it between ups.
func (f *fixture) editConfig(old, new string) {
	f.t.Helper()
	path := filepath.Join(f.wt, "binky.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		f.t.Fatalf("binky.toml has no %q", old)
	}
	f.write(path, strings.Replace(string(b), old, new, 1))
}

// record is the world's registry record; nil once it is forgotten.
func (f *fixture) record() *registry.Worktree {
	f.t.Helper()
	rec, err := Find(context.Background(), f.reg, api.WorldRef{Dir: f.wt})
	if err != nil {
		return nil
	}
	return rec
}

// pids maps each cmd service of the world to the pid its record holds
// (0: none), and notes every pid in f.seen.
func (f *fixture) pids() map[string]int {
	f.t.Helper()
	rec := f.record()
	if rec == nil {
		return nil
	}
	svcs, err := f.reg.Services(context.Background(), rec.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]int{}
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd {
			continue
		}
		out[sv.Name] = sv.PID
		if sv.PID > 0 && !slices.Contains(f.seen, sv.PID) {
			f.seen = append(f.seen, sv.PID)
		}
	}
	return out
}

// wantAlive fails unless each service's pid is set and its process runs.
func (f *fixture) wantAlive(pids map[string]int, names ...string) {
	f.t.Helper()
	for _, n := range names {
		if pids[n] <= 0 || !alive(pids[n]) {
			f.t.Errorf("service %s: pid %d is not running; want it running", n, pids[n])
		}
	}
}

// wantDead waits until every pid given has ended.
func (f *fixture) wantDead(pids ...int) {
	f.t.Helper()
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		f.waitFor(fmt.Sprintf("pid %d to end", pid), func() bool { return !alive(pid) })
	}
}

// wantOnlyLive fails unless, of every service pid seen so far, exactly
// those in want run: no process of an earlier up is left behind.
func (f *fixture) wantOnlyLive(want map[string]int) {
	f.t.Helper()
	live := map[int]bool{}
	for _, pid := range want {
		live[pid] = true
	}
	for _, pid := range f.seen {
		if !live[pid] {
			f.wantDead(pid)
		}
	}
}

// waitFor waits, at most waitBound, until cond holds.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("waited %s for %s", waitBound, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantCalls fails unless the fake adapter's calls since the last check
// are want ("verb slice" each, in order).
func (f *fixture) wantCalls(want ...string) {
	f.t.Helper()
	var got []string
	for _, c := range f.fa.takeCalls() {
		got = append(got, c.String())
	}
	if !slices.Equal(got, want) {
		f.t.Errorf("adapter calls = %q; want %q", got, want)
	}
}

// wantState fails unless the world is recorded in state s.
func (f *fixture) wantState(s state.World) {
	f.t.Helper()
	rec := f.record()
	if rec == nil {
		f.t.Fatalf("world is not recorded; want it %s", s)
	}
	if rec.State != s {
		f.t.Errorf("world state = %s (%s); want %s", rec.State, rec.Reason, s)
	}
}

// stopAll stops whatever the test left running.
func (f *fixture) stopAll() {
	ctx := context.Background()
	for _, st := range f.e.sup.Statuses() {
		f.e.sup.Stop(ctx, st.Key)
	}
	f.e.sup.Shutdown()
	for _, pid := range f.seen {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc (macOS): the signal's answer stands
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// freePort is the first port of a block of 60 the test's worlds take
// their ports from: at a random place below the kernel's ephemeral range
// (ports.EphemeralRange), where no outgoing connection of another test or
// program takes a port from under a world, with its first port free now
// (the allocator proves each port free before it hands it out).
func freePort(t *testing.T) int {
	t.Helper()
	top := 32768
	if eph, err := ports.EphemeralRange(context.Background()); err == nil && eph.Range[0] > 20000+600 {
		top = eph.Range[0]
	}
	for range 50 {
		p := 20000 + rand.IntN(top-20000-60)
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}

// testLog keeps the engine's warnings; a failed test shows them. (The
// supervisor may log after the test returns, when t.Log would panic.)
type testLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
