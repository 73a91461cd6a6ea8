//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 29's regressions: an abandoned wake held the FIFO; a queued up kept
// the reserve in force when it was queued; a project's max_parallel was
// counted against every world on the machine.

// queueLimit is the bound status says holds a queued world.
func (e *admEnv) queueLimit(wt string) string {
	e.t.Helper()
	var s struct {
		Worlds []struct {
			Worktree string `json:"worktree"`
			Queue    *struct {
				Limit string `json:"limit"`
			} `json:"queue"`
		} `json:"worlds"`
	}
	r := e.must("status", "--json")
	if err := jsonUnmarshal(r.stdout, &s); err != nil {
		e.t.Fatal(err)
	}
	for _, w := range s.Worlds {
		if w.Worktree == wt && w.Queue != nil {
			return w.Queue.Limit
		}
	}
	return ""
}

// TestAdmissionProjectMaxParallelIsPerProject: a project's max_parallel
// counts that project's worlds only; the machine's (binky reserve) counts
// all. Before issue 29 the first up of a project with max_parallel = 1
// waited while another project ran a world.
func TestAdmissionProjectMaxParallelIsPerProject(t *testing.T) {
	e := newAdmEnv(t, strings.Replace(admissionConfig, `name = "adm"`, "name = \"adm\"\nmax_parallel = 1", 1))
	other := e.addRepo("other", strings.Replace(admissionConfig, `name = "adm"`, `name = "oth"`, 1))
	e.env.binkyIn(other, "up", "o1") // may not be the caller's project: run inside its repo
	if st, _, _, _ := e.admStatusAll().world("o1"); st != "up" {
		t.Fatalf("o1 of project oth: %s; want up", st)
	}
	if r := e.binky("up", "a1", "--no-wait"); r.code != 0 {
		t.Fatalf("first world of a project with max_parallel = 1, another project running one: exit %d\n%s", r.code, r.stderr)
	}
	r := e.binky("up", "a2", "--no-wait")
	if r.code == 0 || !strings.Contains(r.stderr, "max_parallel 1 reached (project "+e.project+")") {
		t.Fatalf("second world of adm: exit %d, %q; want refused by the project's bound", r.code, r.stderr)
	}
	// Queued by its project's bound: status and progress say so, and it
	// does not hold back the other project's up behind it.
	u := e.startUp("a2")
	waitFor(t, "a2 queued", func() bool { _, pos, _, _ := e.admStatus().world("a2"); return pos == 1 })
	if l := e.queueLimit("a2"); l != "project.max_parallel" {
		t.Errorf("a2's queue.limit %q; want project.max_parallel", l)
	}
	if r := e.env.binkyIn(other, "up", "o2", "--no-wait"); r.code != 0 {
		t.Errorf("oth's up behind adm's project-held waiter: exit %d\n%s", r.code, r.stderr)
	}
	// The machine's bound counts every world: 3 run now.
	e.must("reserve", "--max-parallel", "3")
	r = e.env.binkyIn(other, "up", "o3", "--no-wait")
	if r.code == 0 || !strings.Contains(r.stderr, "max_parallel 3 reached (machine)") {
		t.Errorf("o3 with 3 worlds running and a machine bound of 3: exit %d, %q", r.code, r.stderr)
	}
	e.must("down", "a1")
	waitFor(t, "a2 admitted after a1 went down", func() bool { return u.exited() })
	if err := <-u.done; err != nil {
		t.Errorf("a2's up: %v\n%s", err, u.stderr.String())
	}
	if s := u.stderr.String(); !strings.Contains(s, "max_parallel 1 reached (project "+e.project+")") {
		t.Errorf("a2's progress %q; want the project's bound named", s)
	}
}

// admStatusAll is status --json --all.
func (e *admEnv) admStatusAll() admStatus {
	e.t.Helper()
	var s admStatus
	r := e.must("status", "--json")
	if err := jsonUnmarshal(r.stdout, &s); err != nil {
		e.t.Fatalf("status --json --all: %v\n%s", err, r.stdout)
	}
	return s
}

// TestAdmissionReserveChangeAppliesToWaiters: an up queued under one RAM
// reserve is admitted as soon as binky reserve lowers it. Before issue 29
// it kept the reserve in force when it was queued.
func TestAdmissionReserveChangeAppliesToWaiters(t *testing.T) {
	e := newAdmEnv(t, admissionConfig)
	e.setPressure(15, 500) // before the daemon starts: its first sample sees it
	e.must("reserve", "--ram", "20")
	u := e.startUp("r1")
	waitFor(t, "r1 queued", func() bool { _, pos, _, _ := e.admStatus().world("r1"); return pos == 1 })
	if _, _, reason, _ := e.admStatus().world("r1"); reason != "free RAM 15% < reserve 20% (machine)" {
		t.Errorf("r1's reason %q", reason)
	}
	if l := e.queueLimit("r1"); l != "machine.ram_reserve" {
		t.Errorf("r1's queue.limit %q; want machine.ram_reserve", l)
	}
	e.must("reserve", "--ram", "10")
	waitFor(t, "r1 admitted under the new reserve", func() bool { return u.exited() })
	if err := <-u.done; err != nil {
		t.Errorf("r1's up: %v\n%s", err, u.stderr.String())
	}
}

// TestAdmissionAbandonedWakeLeavesQueue: a wake whose HTTP client gave up
// leaves the queue at once. Before issue 29 it stayed at the head of the
// FIFO for 10 minutes, and every later up waited behind it.
func TestAdmissionAbandonedWakeLeavesQueue(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3") // it serves the test page
	e := newAdmEnv(t, strings.Replace(wakeConfig, `idle_suspend = "1s"`, "", 1))
	e.must("up", "w1")
	e.must("down", "w1")
	e.must("reserve", "--max-parallel", "1")
	e.must("up", "w2") // takes the one place
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	jsonUnmarshal(e.must("daemon", "status", "--json").stdout, &ds)
	// A client asks for the down w1 (wake = true) and gives up while the
	// wake waits in the queue.
	rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
	rq.Host = "web.w1." + e.project + ".localhost"
	go func() {
		resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(rq)
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the wake of w1 queued", func() bool { _, pos, _, _ := e.admStatus().world("w1"); return pos == 1 })
	waitFor(t, "the abandoned wake to leave the queue", func() bool {
		_, pos, _, _ := e.admStatus().world("w1")
		return pos == 0
	})
	// The place w2 gives back goes to the next up, not to the abandoned wake.
	e.must("down", "w2")
	if r := e.binky("up", "w3", "--no-wait"); r.code != 0 {
		t.Fatalf("up after the abandoned wake: exit %d\n%s", r.code, r.stderr)
	}
	if st, _, _, _ := e.admStatus().world("w1"); st != "down" {
		t.Errorf("w1 after its abandoned wake: %s; want down", st)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestAdmissionQueueAcrossKill9: two ups wait in the queue when the daemon
// is killed with SIGKILL. Their callers go with it; the next daemon marks
// each world down with the reason (one of them never recorded before), and
// none is left starting or queued. An up run again queues as before.
func TestAdmissionQueueAcrossKill9(t *testing.T) {
	e := newAdmEnv(t, admissionConfig)
	e.must("up", "k2")
	e.must("down", "k2") // recorded down before it queues; k3 never is
	e.must("reserve", "--max-parallel", "1")
	e.must("up", "k1")
	// One after the other: two ups started at once may reach the queue
	// in either order.
	ups := []*bgUp{e.startUp("k2")}
	waitFor(t, "k2 queued", func() bool { _, p, _, _ := e.admStatus().world("k2"); return p == 1 })
	ups = append(ups, e.startUp("k3"))
	waitFor(t, "k3 queued behind k2", func() bool { _, p, _, _ := e.admStatus().world("k3"); return p == 2 })
	killDaemon(t, e.env)
	for _, u := range ups {
		waitFor(t, "the queued up to end with its daemon", func() bool { return u.exited() })
	}
	var s struct {
		Worlds []struct {
			Worktree string          `json:"worktree"`
			State    string          `json:"state"`
			Reason   string          `json:"reason"`
			Queue    json.RawMessage `json:"queue"`
		} `json:"worlds"`
	}
	if err := jsonUnmarshal(e.must("status", "--json").stdout, &s); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range s.Worlds {
		seen[w.Worktree] = true
		switch w.Worktree {
		case "k1":
			if w.State != "up" {
				t.Errorf("k1 after the restart: %s; want up", w.State)
			}
		case "k2", "k3":
			if w.State != "down" || !strings.Contains(w.Reason, "was queued") || !strings.Contains(w.Reason, "binky up "+w.Worktree) || len(w.Queue) > 0 {
				t.Errorf("%s after the restart: %s %q queue %s; want down with the reason", w.Worktree, w.State, w.Reason, w.Queue)
			}
		}
	}
	if !seen["k2"] || !seen["k3"] {
		t.Errorf("status after the restart lists %v; want k2 and k3 (down)", seen)
	}
	// Its caller back, k3 queues again.
	u := e.startUp("k3")
	waitFor(t, "k3 queued again", func() bool { _, p, _, _ := e.admStatus().world("k3"); return p == 1 })
	e.must("down", "k1")
	waitFor(t, "k3 admitted", func() bool { return u.exited() })
	if err := <-u.done; err != nil {
		t.Errorf("k3's up after the restart: %v\n%s", err, u.stderr.String())
	}
}
