package main

import (
	"bytes"
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
