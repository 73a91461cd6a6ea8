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
	"sync"
	"testing"
	"time"
)

// Per-service wake (issue 43): a url service with wake = true is left
// waiting by up and started by its first request through the proxy,
// after what it depends on; a burst of first requests starts it once;
// idle_suspend stops it again, and the next request starts it again.

const wakeServiceConfig = `
[project]
name = "wks"
port_range = PORTRANGE

[agents]
expose = ["web"]

[services.api]
cmd    = "echo started >> STARTS/api; exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url    = "api"
wake   = true
health = "http://127.0.0.1:${self.port}/"

[services.web]
cmd          = "echo started >> STARTS/web; exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url          = "web"
wake         = true
idle_suspend = "2s"
depends_on   = ["api"]
health       = "http://127.0.0.1:${self.port}/"
`

// wakeServices reads status --json: each service's state, reason and pid.
func wakeServices(t *testing.T, e *env, wt string) map[string]struct {
	State, Reason string
	Pid           int
} {
	t.Helper()
	var s struct {
		Worlds []struct {
			Worktree string `json:"worktree"`
			State    string `json:"state"`
			Services []struct {
				Name   string `json:"name"`
				State  string `json:"state"`
				Reason string `json:"reason"`
				Pid    int    `json:"pid"`
			} `json:"services"`
		} `json:"worlds"`
	}
	out := e.must("status", "--json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	got := map[string]struct {
		State, Reason string
		Pid           int
	}{}
	for _, w := range s.Worlds {
		if w.Worktree != wt {
			continue
		}
		for _, sv := range w.Services {
			got[sv.Name] = struct {
				State, Reason string
				Pid           int
			}{sv.State, sv.Reason, sv.Pid}
		}
	}
	return got
}

func TestWakeServiceOnFirstRequest(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3") // the services serve http
	starts := t.TempDir()
	e := newEnv(t, strings.ReplaceAll(wakeServiceConfig, "STARTS", starts))
	count := func(name string) int { return strings.Count(read(filepath.Join(starts, name)), "started") }
	waiting := func(names ...string) {
		t.Helper()
		svcs := wakeServices(t, e, "w")
		for _, n := range names {
			if sv := svcs[n]; sv.State != "stopped" || sv.Reason != "starts on its first request" {
				t.Errorf("status: %s is %s (%q); want stopped, starts on its first request", n, sv.State, sv.Reason)
			}
		}
	}

	// up leaves both waiting; the plan, status and env say so.
	e.must("up", "-q", "w")
	if n := count("api") + count("web"); n != 0 {
		t.Fatalf("up started a wake service (%d starts)", n)
	}
	waiting("api", "web")
	if dry := e.must("up", "--dry-run", "w").stdout; !strings.Contains(dry, "wait      web: starts on its first request") {
		t.Errorf("up --dry-run does not say web waits:\n%s", dry)
	}
	if env := e.must("env", "w"); !strings.Contains(env.stderr, "web is not running yet: it starts on its first request") || !strings.Contains(env.stdout, "web.w."+e.project+".localhost") {
		t.Errorf("env of a waiting web: stdout %s stderr %s; want its URL, and said it starts on its first request", env.stdout, env.stderr)
	}

	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	get := func(browser bool) (int, string) {
		rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
		rq.Host = "web.w." + e.project + ".localhost"
		if browser {
			rq.Header.Set("Accept", "text/html,application/xhtml+xml")
		}
		resp, err := (&http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{Proxy: nil}}).Do(rq)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// Five first requests at once: each waits and is answered by web
	// (python's listing of the worktree); api started first; each once.
	const n = 5
	var wg sync.WaitGroup
	codes, bodies := make([]int, n), make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i], bodies[i] = get(false) }()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || !strings.Contains(bodies[i], "binky.toml") {
			t.Errorf("first request %d: %d %.300q; want 200 with the worktree's listing", i, codes[i], bodies[i])
		}
	}
	if a, w := count("api"), count("web"); a != 1 || w != 1 {
		t.Fatalf("api started %d times, web %d; want once each\ndaemon log:\n%s", a, w, e.daemonLog())
	}
	svcs := wakeServices(t, e, "w")
	apiPid := svcs["api"].Pid
	if svcs["web"].State != "running" || svcs["api"].State != "running" || apiPid == 0 {
		t.Errorf("after the first requests: %+v; want web and api running", svcs)
	}

	// No more requests: web idles out back to waiting; api runs on.
	waitFor(t, "web stopped after idle_suspend", func() bool {
		sv := wakeServices(t, e, "w")["web"]
		return sv.State == "stopped" && sv.Reason == "starts on its first request"
	})
	if !alive(apiPid) {
		t.Errorf("api (pid %d) stopped with web; it has no idle_suspend", apiPid)
	}

	// A browser gets the starting page (once the proxy's table has web
	// waiting: status may say stopped a moment before); the next request
	// is served by web started again (once), api left as it was.
	var last string
	waitFor(t, "a browser's starting page", func() bool {
		code, body := get(true)
		last = fmt.Sprintf("%d %.300q", code, body)
		if code == http.StatusServiceUnavailable && strings.Contains(body, "is not answering") {
			return false // the route still says running
		}
		return true
	})
	if !strings.Contains(last, "503") || !strings.Contains(last, "starting web.w") {
		t.Errorf("a browser's request to a waiting web: %s; want the starting page", last)
	}
	waitFor(t, "web started again", func() bool {
		code, body := get(false)
		return code == 200 && strings.Contains(body, "binky.toml")
	})
	if a, w := count("api"), count("web"); a != 1 || w != 2 {
		t.Errorf("api started %d times, web %d; want 1 and 2", a, w)
	}

	// down, then up: both wait again, nothing started.
	e.must("down", "w")
	e.must("up", "-q", "w")
	waiting("api", "web")
	if a, w := count("api"), count("web"); a != 1 || w != 2 {
		t.Errorf("down and up started a wake service: api %d, web %d starts", a, w)
	}
	if _, err := os.Stat(starts); err != nil {
		t.Fatal(err)
	}
}
