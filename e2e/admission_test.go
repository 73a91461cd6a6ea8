//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The admission tests play memory and disk pressure through the daemon's
// test hook (BINKY_TEST_PRESSURE, docs/admission.md): a JSON file read as
// the pressure source, so no real pressure is needed.

const admissionConfig = `
[project]
name = "adm"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
`

// admEnv is an env whose daemon reads pressure from a file the test writes.
type admEnv struct {
	*env
	pressure string
}

func newAdmEnv(t *testing.T, config string) *admEnv {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("suspension and /proc checks are Linux-only")
	}
	e := &admEnv{env: newEnv(t, config)}
	e.pressure = filepath.Join(t.TempDir(), "pressure.json")
	e.setPressure(80, 500)
	e.extra = append(e.extra, "BINKY_TEST_PRESSURE="+e.pressure, "BINKY_TEST_PRESSURE_INTERVAL=100ms")
	return e
}

// setPressure writes free RAM (percent of 16 GB) and free disk (GB).
func (e *admEnv) setPressure(ramPct, diskGB float64) {
	e.t.Helper()
	const total = 16e9
	b, _ := json.Marshal(map[string]float64{
		"mem_total": total, "mem_available": total * ramPct / 100,
		"disk_total": 1e12, "disk_free": diskGB * 1e9,
	})
	tmp := e.pressure + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, e.pressure); err != nil {
		e.t.Fatal(err)
	}
}

type admStatus struct {
	Worlds []struct {
		Worktree  string `json:"worktree"`
		State     string `json:"state"`
		Suspended string `json:"suspended"`
		Queue     *struct {
			Position int    `json:"position"`
			Reason   string `json:"reason"`
		} `json:"queue"`
		Services []serviceJSON `json:"services"`
	} `json:"worlds"`
	Pressure *struct {
		RAMFreePct float64 `json:"ram_free_pct"`
		RAMReserve float64 `json:"ram_reserve"`
		DiskFreeGB float64 `json:"disk_free_gb"`
		Running    int     `json:"running"`
		Queued     int     `json:"queued"`
	} `json:"pressure"`
}

func (e *admEnv) admStatus() admStatus {
	e.t.Helper()
	var s admStatus
	r := e.must("status", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return s
}

// world returns the state, queue position and reason of one world ("" when
// status does not list it).
func (s admStatus) world(wt string) (state string, pos int, reason string, pid int) {
	for _, w := range s.Worlds {
		if w.Worktree == wt {
			if w.Queue != nil {
				pos, reason = w.Queue.Position, w.Queue.Reason
			}
			for _, sv := range w.Services {
				if sv.Name == "web" {
					pid = sv.Pid
				}
			}
			return w.State, pos, reason, pid
		}
	}
	return "", 0, "", 0
}

// waitSampled waits until the daemon's admission loop has read the
// pressure setPressure wrote last (status shows it): what follows then
// sees that pressure, however slow the machine. A fixed sleep here was
// too short under load.
func (e *admEnv) waitSampled(ramPct, diskGB float64) {
	e.t.Helper()
	waitFor(e.t, fmt.Sprintf("the daemon to read %.0f%% free RAM, %.1f GB free disk", ramPct, diskGB), func() bool {
		p := e.admStatus().Pressure
		return p != nil && math.Abs(p.RAMFreePct-ramPct) < 0.01 && math.Abs(p.DiskFreeGB-diskGB) < 0.01
	})
}

// bgUp starts `binky up branch` without waiting for it.
type bgUp struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func (e *admEnv) startUp(branch string, extra ...string) *bgUp {
	e.t.Helper()
	u := &bgUp{done: make(chan error, 1)}
	u.cmd = exec.Command(filepath.Join(binDir, "binky"), append([]string{"up", branch}, extra...)...)
	u.cmd.Dir = e.repo
	u.cmd.Env = append(e.environ(), e.extra...)
	u.cmd.Stderr = &u.stderr
	if err := u.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { u.done <- u.cmd.Wait() }()
	e.t.Cleanup(func() { u.cmd.Process.Kill() })
	return u
}

func (u *bgUp) exited() bool {
	select {
	case err := <-u.done:
		u.done <- err
		return true
	default:
		return false
	}
}

// stopped reports whether pid is stopped (SIGSTOP: state T).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'T'
}

// TestAdmissionQueue: with max_parallel 2, ups beyond it wait in FIFO order
// with their position and reason in status and in their progress; each
// down admits the next; Ctrl-C on a queued up leaves the queue; --no-wait
// refuses at once with the reason.
func TestAdmissionQueue(t *testing.T) {
	e := newAdmEnv(t, admissionConfig)
	e.must("reserve", "--max-parallel", "2")
	e.must("up", "q1")
	e.must("up", "q2")

	// --no-wait refuses with the reason, and nothing is queued.
	r := e.binky("up", "q9", "--no-wait")
	if r.code == 0 || !strings.Contains(r.stderr, "max_parallel 2 reached") {
		t.Fatalf("up --no-wait: exit %d, stderr %q; want a refusal naming max_parallel 2", r.code, r.stderr)
	}

	ups := map[string]*bgUp{}
	for i, b := range []string{"q3", "q4", "q5"} {
		ups[b] = e.startUp(b)
		waitFor(t, b+" queued at "+strconv.Itoa(i+1), func() bool {
			_, pos, _, _ := e.admStatus().world(b)
			return pos == i+1
		})
	}
	st := e.admStatus()
	if state, pos, reason, _ := st.world("q4"); state != "queued" || pos != 2 || reason != "max_parallel 2 reached (machine)" {
		t.Errorf("q4: %s #%d %q; want queued #2 \"max_parallel 2 reached (machine)\"", state, pos, reason)
	}
	if st.Pressure == nil || st.Pressure.Running != 2 || st.Pressure.Queued != 3 {
		t.Errorf("pressure %+v; want 2 running, 3 queued", st.Pressure)
	}
	if s := ups["q3"].stderr.String(); !strings.Contains(s, "position 1: max_parallel 2 reached") {
		t.Errorf("q3's progress %q; want its position and reason", s)
	}

	// Ctrl-C on q4 (queued): it leaves; q5 moves up.
	ups["q4"].cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "q4 to leave the queue", func() bool {
		state, _, _, _ := e.admStatus().world("q4")
		_, pos5, _, _ := e.admStatus().world("q5")
		return state != "queued" && pos5 == 2
	})

	// Each down admits the next in order.
	e.must("down", "q1")
	waitFor(t, "q3 up", func() bool { return ups["q3"].exited() })
	if state, _, _, _ := e.admStatus().world("q3"); state != "up" {
		t.Errorf("q3 after down q1: %s; want up", state)
	}
	if state, pos, _, _ := e.admStatus().world("q5"); state != "queued" || pos != 1 {
		t.Errorf("q5 after down q1: %s #%d; want still queued #1", state, pos)
	}
	e.must("down", "q2")
	waitFor(t, "q5 up", func() bool { return ups["q5"].exited() })
	if err := <-ups["q5"].done; err != nil {
		t.Errorf("q5's up: %v\n%s", err, ups["q5"].stderr.String())
	}
	if state, _, _, _ := e.admStatus().world("q4"); state == "up" {
		t.Errorf("the cancelled q4 was brought up")
	}

	// Disk: the reason names free disk against the headroom.
	e.must("reserve", "--max-parallel", "0", "--disk", "5")
	e.setPressure(80, 3.1)
	e.waitSampled(80, 3.1)
	r = e.binky("up", "q8", "--no-wait")
	if r.code == 0 || !strings.Contains(r.stderr, "free disk 3.1 GB < headroom 5 GB") {
		t.Errorf("up --no-wait on a full disk: exit %d, %q", r.code, r.stderr)
	}
}

// TestAdmissionSuspendResume: below the RAM reserve the newest world is
// suspended (its processes stopped, its ports kept), then the next newest,
// never the oldest; once free RAM is above reserve plus hysteresis they
// resume in the order they were suspended; up on a suspended world resumes
// it.
func TestAdmissionSuspendResume(t *testing.T) {
	e := newAdmEnv(t, admissionConfig)
	e.must("reserve", "--ram", "20")
	for _, b := range []string{"s1", "s2", "s3"} {
		e.must("up", b)
	}
	pids := map[string]int{}
	for _, b := range []string{"s1", "s2", "s3"} {
		_, _, _, pids[b] = e.admStatus().world(b)
	}
	e.setPressure(15, 500)
	waitFor(t, "s3 suspended", func() bool { s, _, _, _ := e.admStatus().world("s3"); return s == "suspended" })
	if !stopped(pids["s3"]) {
		t.Errorf("s3 is suspended but pid %d is not stopped", pids["s3"])
	}
	waitFor(t, "s2 suspended", func() bool { s, _, _, _ := e.admStatus().world("s2"); return s == "suspended" })
	time.Sleep(500 * time.Millisecond)
	if s, _, _, _ := e.admStatus().world("s1"); s != "up" || stopped(pids["s1"]) {
		t.Errorf("the oldest world s1 is %s (stopped %v); want up", s, stopped(pids["s1"]))
	}
	// A new up waits while worlds are suspended for RAM.
	r := e.binky("up", "s4", "--no-wait")
	if r.code == 0 || !strings.Contains(r.stderr, "free RAM 15% < reserve 20%") {
		t.Errorf("up --no-wait under pressure: exit %d, %q", r.code, r.stderr)
	}
	// Between reserve and reserve+hysteresis: nothing resumes (no flapping).
	e.setPressure(22, 500)
	e.waitSampled(22, 500)
	time.Sleep(600 * time.Millisecond) // a few more rounds of the loop, which must not resume
	if s, _, _, _ := e.admStatus().world("s3"); s != "suspended" {
		t.Errorf("s3 resumed at 22%% free (reserve 20 + hysteresis 5): %s", s)
	}
	e.setPressure(40, 500)
	waitFor(t, "both resumed", func() bool {
		a, _, _, _ := e.admStatus().world("s2")
		b, _, _, _ := e.admStatus().world("s3")
		return a == "up" && b == "up"
	})
	if stopped(pids["s2"]) || stopped(pids["s3"]) {
		t.Errorf("resumed worlds still stopped")
	}
	ev := read(filepath.Join(e.home, "events.log"))
	i3 := strings.Index(ev, `"event":"world_resumed","project":"`+e.project+`","worktree":"s3"`)
	i2 := strings.Index(ev, `"event":"world_resumed","project":"`+e.project+`","worktree":"s2"`)
	if i3 < 0 || i2 < 0 || i3 > i2 {
		t.Errorf("resume order in events.log: s3 at %d, s2 at %d; want s3 (suspended first) before s2", i3, i2)
	}
	if n := strings.Count(ev, `"world_suspended"`); n != 2 {
		t.Errorf("%d world_suspended events; want 2 (no flapping)", n)
	}

	// up on a suspended world resumes it.
	e.setPressure(15, 500)
	waitFor(t, "s3 suspended again", func() bool { s, _, _, _ := e.admStatus().world("s3"); return s == "suspended" })
	e.setPressure(22, 500) // above the reserve: room for an up, though not for the loop
	e.waitSampled(22, 500)
	e.must("up", "s3")
	if s, _, _, _ := e.admStatus().world("s3"); s != "up" || stopped(pids["s3"]) {
		t.Errorf("up on suspended s3: %s, stopped %v; want up and running", s, stopped(pids["s3"]))
	}
	// down of a suspended world works (its processes get SIGTERM).
	e.setPressure(15, 500)
	waitFor(t, "s3 suspended again", func() bool { s, _, _, _ := e.admStatus().world("s3"); return s == "suspended" })
	e.must("down", "s3")
	if alive(pids["s3"]) {
		t.Errorf("down of suspended s3 left pid %d", pids["s3"])
	}
}

const wakeConfig = `
[project]
name = "wk"
port_range = PORTRANGE
wake = true
idle_suspend = "1s"

[services.web]
cmd = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url = "web"
health = "http://127.0.0.1:${self.port}/"
`

// TestWakeOnRequest: an idle world is suspended after idle_suspend; a
// request through the proxy resumes it (a browser gets the starting page,
// a client is served); a down world with wake = true is started by a
// request.
func TestWakeOnRequest(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 serves the test page")
	}
	e := newAdmEnv(t, wakeConfig)
	e.must("up", "w1")
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	host := "web.w1." + e.project + ".localhost"
	req := func(accept string) (int, string) {
		t.Helper()
		rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
		rq.Host = host
		if accept != "" {
			rq.Header.Set("Accept", accept)
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(rq)
		if err != nil {
			t.Fatalf("through the proxy: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "w1 idle-suspended", func() bool {
		s := e.admStatus()
		for _, w := range s.Worlds {
			if w.Worktree == "w1" {
				return w.State == "suspended" && w.Suspended == "idle"
			}
		}
		return false
	})
	// A browser gets the self-refreshing starting page.
	code, body := req("text/html,application/xhtml+xml")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "starting w1") || !strings.Contains(body, `http-equiv="refresh"`) {
		t.Errorf("browser on a suspended world: %d %.300q; want 503 with a refreshing starting page", code, body)
	}
	waitFor(t, "w1 resumed by the browser's request", func() bool { s, _, _, _ := e.admStatus().world("w1"); return s == "up" })

	// Suspended again, a plain client waits and is served.
	waitFor(t, "w1 idle-suspended again", func() bool { s, _, _, _ := e.admStatus().world("w1"); return s == "suspended" })
	if code, body := req(""); code != 200 || !strings.Contains(body, "Directory listing") {
		t.Errorf("client on a suspended world: %d %.200q; want 200 from the service", code, body)
	}

	// A down world with wake = true is started by a request.
	e.must("down", "w1")
	if code, body := req(""); code != 200 || !strings.Contains(body, "Directory listing") {
		t.Errorf("client on a down world with wake = true: %d %.200q; want 200", code, body)
	}
	if s, _, _, _ := e.admStatus().world("w1"); s != "up" && s != "suspended" {
		t.Errorf("w1 after the wake: %s; want up", s)
	}
	if ev := read(filepath.Join(e.home, "events.log")); strings.Count(ev, `"world_woken"`) < 3 {
		t.Errorf("events.log has %d world_woken; want 3", strings.Count(ev, `"world_woken"`))
	}
}

// TestAdmissionRealMemoryHog is the one run under real pressure: it sets
// the RAM reserve a little below what is free now, starts a process that
// takes memory until the reserve trips, and checks that the newest world
// is suspended, then resumed once the hog is gone. It takes a few GB of
// this machine's RAM, so it runs only with BINKY_TEST_MEMORY_HOG=1.
func TestAdmissionRealMemoryHog(t *testing.T) {
	if os.Getenv("BINKY_TEST_MEMORY_HOG") != "1" {
		t.Skip("set BINKY_TEST_MEMORY_HOG=1 to run a real memory hog")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is the memory hog")
	}
	e := &admEnv{env: newEnv(t, admissionConfig)}
	e.extra = append(e.extra, "BINKY_TEST_PRESSURE_INTERVAL=250ms")
	total, avail := meminfo(t)
	freePct := 100 * float64(avail) / float64(total)
	// Trip at ~2 GB below what is free now.
	reserve := freePct - 100*2e9/float64(total)
	t.Logf("free RAM %.1f%% of %.1f GB; reserve set to %.1f%%", freePct, float64(total)/1e9, reserve)
	e.must("reserve", "--ram", strconv.FormatFloat(reserve, 'f', 1, 64))
	e.must("up", "h1")
	e.must("up", "h2")
	_, _, _, pid2 := e.admStatus().world("h2")

	// The hog takes 100 MB every 50 ms (touched, so resident) up to 4 GB,
	// then holds it.
	hog := exec.Command("python3", "-c", `
import time
held = []
for i in range(40):
    held.append(bytearray(b"x" * (100 << 20)))
    time.sleep(0.05)
time.sleep(600)
`)
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer hog.Process.Kill()
	start := time.Now()
	waitFor(t, "the newest world h2 suspended", func() bool { s, _, _, _ := e.admStatus().world("h2"); return s == "suspended" })
	_, avail2 := meminfo(t)
	t.Logf("h2 suspended %.1fs after the hog started, free RAM %.1f%%; h2 pid %d stopped: %v",
		time.Since(start).Seconds(), 100*float64(avail2)/float64(total), pid2, stopped(pid2))
	if !stopped(pid2) {
		t.Errorf("h2 is suspended but its pid %d is not stopped", pid2)
	}
	if s, _, _, _ := e.admStatus().world("h1"); s != "up" {
		t.Errorf("the oldest world h1 is %s; want up", s)
	}
	hog.Process.Kill()
	hog.Wait()
	start = time.Now()
	waitFor(t, "h2 resumed after the hog ended", func() bool { s, _, _, _ := e.admStatus().world("h2"); return s == "up" })
	t.Logf("h2 resumed %.1fs after the hog ended", time.Since(start).Seconds())
}

func meminfo(t *testing.T) (total, avail uint64) {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = n * 1024
		case "MemAvailable:":
			avail = n * 1024
		}
	}
	return total, avail
}
