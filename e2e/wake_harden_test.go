//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A wake start in progress meets what users do to a world: the daemon
// killed (kill -9) under it, down, remove. Its health check waits for a
// gate file, so the start is caught in progress without timing.

const wakeGateConfig = `
[project]
name = "wkh"
port_range = PORTRANGE

[services.web]
cmd    = "echo started >> DIR/starts; exec python3 -m http.server ${self.port} --bind 127.0.0.1 --directory DIR"
url    = "web"
wake   = true
health = { exec = "test -f DIR/open" }
`

// wakeGate is a home whose world w has web waiting behind a gate.
type wakeGate struct {
	*env
	dir string
}

func newWakeGate(t *testing.T) *wakeGate {
	needCommand(t, "python3", "apt-get install python3")
	dir := t.TempDir()
	g := &wakeGate{env: newEnv(t, strings.ReplaceAll(wakeGateConfig, "DIR", dir)), dir: dir}
	g.must("up", "-q", "w")
	return g
}

func (g *wakeGate) starts() int {
	return strings.Count(read(filepath.Join(g.dir, "starts")), "started")
}

func (g *wakeGate) open() {
	if err := os.WriteFile(filepath.Join(g.dir, "open"), nil, 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// procs are the pids of web's processes: the Python interpreters whose
// command line names this test's directory. Only the interpreter counts:
// python3 may be a shim (pyenv's is a bash script) whose shell forks
// copies of itself, command line and all, and execs down a chain; a
// process inside an exec reads an empty command line for a moment.
func (g *wakeGate) procs() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		var pid int
		if _, err := fmt.Sscan(d.Name(), &pid); err != nil || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(string(b), "\x00")
		if strings.HasPrefix(filepath.Base(argv[0]), "python") && strings.Contains(string(b), "http.server") && strings.Contains(string(b), g.dir) {
			out = append(out, pid)
		}
	}
	return out
}

// get asks the proxy for web.w.<project>.localhost as a non-browser client
// (it waits for a wake).
func (g *wakeGate) get() (int, string) {
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(g.must("daemon", "status", "--json").stdout), &ds)
	rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
	rq.Host = "web.w." + g.project + ".localhost"
	resp, err := (&http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{Proxy: nil}}).Do(rq)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startWake sends the first request and returns once web's process runs
// (its start line written), its health gate still shut, with that
// process's pid; the request's answer comes on the channel.
func (g *wakeGate) startWake() (<-chan string, int) {
	ch := make(chan string, 1)
	go func() {
		code, body := g.get()
		ch <- fmt.Sprintf("%d %.200q", code, body)
	}()
	var pid int
	waitFor(g.t, "web started by its first request", func() bool {
		ps := g.procs()
		if g.starts() != 1 || len(ps) != 1 {
			return false
		}
		pid = ps[0]
		return true
	})
	return ch, pid
}

// TestWakeStartDaemonKilled: the daemon is killed while a request's wake
// waits for web to be healthy. The waiting request fails with it; the
// next daemon finds web's process and keeps it (no second one), and
// status says so; once healthy the next request is served by that
// process, not a new start.
func TestWakeStartDaemonKilled(t *testing.T) {
	g := newWakeGate(t)
	answer, pid := g.startWake()
	killDaemon(t, g.env)
	if got := <-answer; strings.HasPrefix(got, "200") {
		t.Errorf("the waiting request after the daemon's kill: %s; want it failed", got)
	}
	if !alive(pid) {
		t.Fatalf("web (pid %d) died with the daemon", pid)
	}
	sv := wakeServices(t, g.env, "w")["web"]
	t.Logf("status after the daemon's restart: %+v", sv)
	if sv.Pid != pid || sv.State == "stopped" {
		t.Errorf("status after the daemon's restart: web %+v; want its process %d (starting or running)", sv, pid)
	}
	g.open()
	waitFor(t, "web served", func() bool { code, _ := g.get(); return code == 200 })
	if n, ps := g.starts(), g.procs(); n != 1 || len(ps) != 1 || ps[0] != pid {
		t.Errorf("after the next request: %d starts, web's processes %v; want 1 start, only pid %d", n, ps, pid)
	}
	if sv := wakeServices(t, g.env, "w")["web"]; sv.State != "running" || sv.Pid != pid {
		t.Errorf("status: web %+v; want running as pid %d", sv, pid)
	}
	// An up now keeps the running web: no second start, no second process.
	g.must("up", "-q", "w")
	if n, ps := g.starts(), g.procs(); n != 1 || len(ps) != 1 || ps[0] != pid {
		t.Errorf("after an up: %d starts, web's processes %v; want 1 start, only pid %d", n, ps, pid)
	}
	g.must("down", "w")
	if ps := g.procs(); len(ps) != 0 {
		t.Errorf("down left web's processes %v", ps)
	}
}

// TestWakeStartDownRemove: down, and remove, while a wake start is in
// progress: each ends with no process of web left and no route (a request
// after it starts nothing).
func TestWakeStartDownRemove(t *testing.T) {
	for _, verb := range [][]string{{"down", "w"}, {"remove", "--force", "w"}} {
		t.Run(verb[0], func(t *testing.T) {
			g := newWakeGate(t)
			answer, _ := g.startWake()
			done := make(chan result, 1)
			go func() { done <- g.binky(verb...) }()
			// down waits for the world's lock, which the wake holds
			// until web is healthy.
			g.open()
			if r := <-done; r.code != 0 {
				t.Fatalf("%s: %d %s %s", verb[0], r.code, r.stdout, r.stderr)
			}
			t.Logf("the waiting request: %s", <-answer)
			if ps := g.procs(); len(ps) != 0 {
				t.Errorf("%s during a wake left web's processes %v", verb[0], ps)
			}
			code, body := g.get()
			if code == 200 || g.starts() != 1 {
				t.Errorf("a request after %s: %d %.200q, %d starts; want no start", verb[0], code, body, g.starts())
			}
			if ps := g.procs(); len(ps) != 0 {
				t.Errorf("a request after %s started web: %v", verb[0], ps)
			}
		})
	}
}
