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

// Suspension under memory pressure passes over a world with no live
// process (a world of slices only: suspending it frees nothing), and the
// page a browser gets for a world suspended for memory says so, and when
// it resumes, instead of "starting" (issue 29).

const suspendPageConfig = `
[project]
name = "sus"
port_range = PORTRANGE
wake = true

[services.web]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url    = "web"
health = "http://127.0.0.1:${self.port}/"
`

func TestAdmissionSuspendSkipsWorldsWithoutProcessesAndSaysWhy(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3") // it serves the test page
	e := newAdmEnv(t, suspendPageConfig)
	e.must("reserve", "--ram", "20")
	e.must("up", "s1")
	e.must("up", "s2")
	// s3, the newest, has slices only: its branch's binky.toml has no cmd
	// service.
	e.git("checkout", "-q", "-b", "s3")
	os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(e.render(`
[project]
name = "sus"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
`)), 0o644)
	e.git("commit", "-q", "-am", "slices only")
	e.git("checkout", "-q", "main")
	e.must("up", "s3")

	e.setPressure(15, 500)
	waitFor(t, "s2 suspended", func() bool { s, _, _, _ := e.admStatus().world("s2"); return s == "suspended" })
	if s, _, _, _ := e.admStatus().world("s3"); s == "suspended" {
		t.Errorf("s3 (no process) was suspended; want it passed over")
	}
	if ev := read(filepath.Join(e.home, "events.log")); strings.Contains(ev, `"event":"world_suspended","project":"`+e.project+`","worktree":"s3"`) {
		t.Errorf("a world_suspended event for s3, which has no process")
	}

	// The page of the world suspended for memory says why and when it
	// resumes; it is not a "starting" page.
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
	rq.Host = "web.s2." + e.project + ".localhost"
	rq.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(rq)
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "suspended to relieve memory pressure") || !strings.Contains(string(body), "resumes when") {
		t.Errorf("page of a world suspended for memory: %d %.400q; want why it is suspended and when it resumes", resp.StatusCode, body)
	}
}

// An up queued through MCP whose client goes away leaves the queue at
// once: it does not wait for its turn and start a world nobody asked for
// any more (issue 29).
func TestAdmissionMCPClientGoneLeavesQueue(t *testing.T) {
	e := newAdmEnv(t, strings.Replace(admissionConfig, `name = "adm"`, "name = \"adm\"\nmax_parallel = 1", 1))
	e.must("up", "a1")
	m := e.startRawMCP()
	m.id++
	m.send(map[string]any{"jsonrpc": "2.0", "id": m.id, "method": "tools/call", "params": map[string]any{
		"name": "up", "arguments": map[string]any{"branch": "a2"}, "_meta": map[string]any{"progressToken": "q"},
	}})
	waitFor(t, "a2 queued behind max_parallel", func() bool { _, pos, _, _ := e.admStatus().world("a2"); return pos == 1 })

	// The agent's client is gone: stdin closed, the server ended.
	m.stdin.Close()
	m.cmd.Process.Kill()
	m.cmd.Wait()
	waitFor(t, "a2 out of the queue", func() bool {
		_, pos, _, _ := e.admStatus().world("a2")
		return pos == 0
	})
	if s, _, _, _ := e.admStatus().world("a2"); s == "starting" || s == "up" {
		t.Errorf("a2 is %s after its caller left the queue", s)
	}
	if s := e.admStatus().Pressure; s != nil && s.Queued != 0 {
		t.Errorf("%d waiters after the MCP client left; want 0", s.Queued)
	}
}
