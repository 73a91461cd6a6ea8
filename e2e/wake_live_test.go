//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An open connection through the proxy is in use: a wake service with
// idle_suspend is not stopped under an event stream (a dev server's live
// reload) however long it stays open, and idles out once it closed.

// sseServer serves / (ok) and /events: an event every 100 ms until the
// client goes away.
const sseServer = `import sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/events":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"ok\n")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        n = 0
        try:
            while True:
                n += 1
                self.wfile.write(("data: tick %d\n\n" % n).encode())
                self.wfile.flush()
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *a):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

const wakeLiveConfig = `
[project]
name = "wkl"
port_range = PORTRANGE

[services.web]
cmd          = "echo started >> STARTS/web; exec python3 SERVER ${self.port}"
url          = "web"
wake         = true
idle_suspend = "1s"
health       = "http://127.0.0.1:${self.port}/"
`

func TestWakeServiceIdleWaitsForOpenStream(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	dir := t.TempDir()
	server := filepath.Join(dir, "sse.py")
	if err := os.WriteFile(server, []byte(sseServer), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, strings.NewReplacer("STARTS", dir, "SERVER", server).Replace(wakeLiveConfig))
	starts := func() int { return strings.Count(read(filepath.Join(dir, "web")), "started") }
	e.must("up", "-q", "w")
	if sv := wakeServices(t, e, "w")["web"]; sv.State != "stopped" {
		t.Fatalf("after up web is %s; want it waiting", sv.State)
	}
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)

	// The stream's request wakes web and is answered by it.
	rq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/events", ds.ProxyPort), nil)
	rq.Host = "web.w." + e.project + ".localhost"
	rq.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(rq)
	if err != nil {
		t.Fatalf("open the event stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("event stream: %d %s; want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	next := func() string {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the event stream ended: %v\ndaemon log:\n%s", err, e.daemonLog())
			}
			if strings.HasPrefix(line, "data: ") {
				return strings.TrimSpace(line)
			}
		}
	}
	next()
	pid := wakeServices(t, e, "w")["web"].Pid
	if pid == 0 {
		t.Fatal("web has no pid with its stream open")
	}

	// Held open four times idle_suspend (the server paces the events, so
	// at least that much time passes): the idle timer fired under it.
	opened := time.Now()
	events := 1
	for time.Since(opened) < 4*time.Second || events < 40 {
		next()
		events++
	}
	sv := wakeServices(t, e, "w")["web"]
	if sv.State != "running" || sv.Pid != pid || starts() != 1 {
		t.Fatalf("after %s with the stream open: web %s pid %d (was %d), %d starts; want it running, the same process, started once\ndaemon log:\n%s",
			time.Since(opened).Round(time.Second), sv.State, sv.Pid, pid, starts(), e.daemonLog())
	}
	if ev := next(); !strings.HasPrefix(ev, "data: tick") {
		t.Errorf("the stream after the idle checks: %q; want it still receiving", ev)
	}

	// Closed: web idles out back to waiting, and its process ends.
	resp.Body.Close()
	waitFor(t, "web back to waiting after the stream closed", func() bool {
		sv := wakeServices(t, e, "w")["web"]
		return sv.State == "stopped" && sv.Reason == "starts on its first request"
	})
	waitFor(t, "web's process to end", func() bool { return !alive(pid) })
	if n := starts(); n != 1 {
		t.Errorf("web started %d times; want once", n)
	}
}
