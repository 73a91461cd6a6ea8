package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

func TestPrintStatus(t *testing.T) {
	res := api.StatusResult{Worlds: []api.World{
		{Project: "p", Worktree: "a", Branch: "a", State: "degraded", Ports: [2]int{41000, 41001},
			Verify: &api.Verify{Passed: true, Commit: "abc1234567", Dirty: true, At: time.Now()},
			Services: []api.Service{
				{Name: "web", State: "running", Pid: 10, Port: 41000},
				{Name: "job", State: "failed", Error: "exit 3", LogTail: []string{"line one", "boom"}},
			}},
		{Project: "p", Worktree: "b", Branch: "b", State: "down"},
	}}
	var plain bytes.Buffer
	if err := printStatus(&plain, res, style{}); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	for _, want := range []string{"verify passed at abc12345+dirty", "ports 41000-41001", "no ports", "job, last log lines (binky logs a job):\n      line one\n      boom\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0-0") || strings.Contains(out, "\x1b[") {
		t.Errorf("plain status shows ports 0-0 or escape codes:\n%q", out)
	}
	var colored bytes.Buffer
	printStatus(&colored, res, style{color: true})
	if !strings.Contains(colored.String(), ansiRed+"failed"+ansiReset) || !strings.Contains(colored.String(), ansiGreen+"running"+ansiReset) {
		t.Errorf("coloured status lacks coloured states:\n%q", colored.String())
	}
}

// TestStyleFor: colour and live redraws only on a terminal, never with
// NO_COLOR set or TERM=dumb.
func TestStyleFor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if st := styleFor(f, env(nil)); st.color || st.live {
		t.Errorf("styleFor(a file) = %+v; want plain", st)
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no terminal to test against: %v", err)
	}
	defer tty.Close()
	if st := styleFor(tty, env(nil)); !st.color || !st.live {
		t.Errorf("styleFor(a terminal) = %+v; want colour and live", st)
	}
	if st := styleFor(tty, env(map[string]string{"NO_COLOR": "1"})); st.color {
		t.Errorf("styleFor(a terminal, NO_COLOR) = %+v; want no colour", st)
	}
}

// TestProgressPlain: off a terminal each step is one plain line, and done
// writes nothing more.
func TestProgressPlain(t *testing.T) {
	var b bytes.Buffer
	p := &progressPrinter{w: &b}
	p.show(api.Progress{Step: "health", Service: "api", Message: "waiting", Elapsed: 1500})
	p.done()
	if got := b.String(); got != "     1.5s  health     api: waiting\n" {
		t.Errorf("plain progress = %q", got)
	}
}

// TestProgressLive: on a terminal a spinner line counts the step's
// seconds, is erased before each step line, and done erases it.
func TestProgressLive(t *testing.T) {
	var b lockedBuf
	p := &progressPrinter{w: &b, style: style{live: true}}
	p.show(api.Progress{Step: "health", Service: "api"})
	p.done()
	got := b.String()
	if !strings.Contains(got, "health api") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("live progress = %q; want a spinner line for the step, erased at the end", got)
	}
}

type lockedBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestPrintStatusDegraded: a degraded daemon's reason comes first, even
// with no worlds to show.
func TestPrintStatusDegraded(t *testing.T) {
	reason := "binky's home /h is on a full disk (no space left on device); the daemon supervises running worlds but refuses new work until space is freed"
	for _, worlds := range [][]api.World{nil, {{Project: "p", Worktree: "a", Branch: "a", State: "up"}}} {
		var out bytes.Buffer
		if err := printStatus(&out, api.StatusResult{Worlds: worlds, Degraded: &api.Degraded{Reason: reason, Since: time.Now()}}, style{}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "degraded: "+reason+" (since ") {
			t.Errorf("status with %d worlds does not start with the degraded reason:\n%s", len(worlds), out.String())
		}
	}
}

// TestPrintStatusTableReply: the reply `binky status` asks for (the table's,
// api.StatusArgs.Table), decoded by hand (api.StatusTable), prints exactly
// what the full reply does.
func TestPrintStatusTableReply(t *testing.T) {
	at := time.Date(2026, 12, 7, 15, 4, 5, 0, time.UTC)
	full := api.StatusResult{
		Worlds: []api.World{{
			Project: "shop", Worktree: "feat-x", Branch: "feat/x", Path: "/src/shop.worktrees/feat-x", Repo: "/src/shop",
			State: "degraded", Reason: "web: unhealthy", Ports: [2]int{21000, 21009}, Selection: "profile frontend", Suspended: "idle",
			Services: []api.Service{
				{Name: "web", Kind: "cmd", State: "unhealthy", Pid: 4242, Warning: "listens beyond loopback", Port: 21000,
					Ports: map[string]int{"http": 21000}, URL: "http://web.feat-x.shop.localhost:1355", Restarts: 2,
					Reason: "unhealthy: GET http://127.0.0.1:21000/: 503 for 40s"},
				{Name: "db", Kind: "adapter", State: "running", Adapter: "postgres", Address: "postgres://u:xxxxx@127.0.0.1:5432/x", Clone: "file_copy, copy-on-write"},
				{Name: "job", Kind: "cmd", State: "failed", Error: "exit 3", LogTail: []string{"line \"one\"", "boom → ✗"}},
				{Name: "worker", Kind: "cmd", State: "stopped", LeftOut: "not in profile frontend"},
			},
			Verify: &api.Verify{Passed: false, Commit: "0123456789abcdef", Dirty: true, At: at, Duration: 1234, Stale: true,
				Checks: []api.Check{{Cmd: "make test", ExitCode: 2}}},
			Cost: &api.Cost{Source: "cgroup", Processes: 3},
		}, {Project: "shop", Worktree: "q", Branch: "q", State: "queued", Queue: &api.Queue{Position: 2, Reason: "max_parallel 4 reached (machine)"}}},
		Pressure: &api.Pressure{RAMFreePct: 86.2, RAMReserve: 10, DiskFreeGB: 7.5, DiskHeadroom: 2, Running: 1, Queued: 1, Jobs: 2},
		Home:     &api.Home{ID: "h", Dir: "/h"},
		Proxy:    &api.ProxyInfo{Port: 1356, URL: "http://binky.localhost:1356", Note: "another home's proxy holds 1355"},
		Degraded: &api.Degraded{Reason: "disk full", Since: at},
	}
	table := full
	table.Worlds = append([]api.World(nil), full.Worlds...)
	for i := range table.Worlds {
		table.Worlds[i].Services = append([]api.Service(nil), full.Worlds[i].Services...)
	}
	table.ForTable()
	b, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	var got api.StatusTable
	if err := got.DecodeResult(b); err != nil {
		t.Fatal(err)
	}
	for _, st := range []style{{}, {color: true}} {
		var want, have bytes.Buffer
		if err := printStatus(&want, full, st); err != nil {
			t.Fatal(err)
		}
		if err := printStatus(&have, got.StatusResult, st); err != nil {
			t.Fatal(err)
		}
		if want.String() != have.String() {
			t.Errorf("the table's reply prints\n%s\nthe full one\n%s", have.String(), want.String())
		}
	}
}
