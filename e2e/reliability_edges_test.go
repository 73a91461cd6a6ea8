//go:build linux

package e2e

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/binkyhq/binky/host/ports"
)

func casePorts(t *testing.T, tr tier, f *figure) {
	e := newEnv(t, `
[project]
name = "held"
port_range = PORTRANGE

[services.web]
cmd   = "exec sleep 100840"
ports = ["http"]
`)
	lo := e.rng[0]
	holders := []struct{ network, addr string }{
		{"tcp4", fmt.Sprintf("0.0.0.0:%d", lo)},
		{"tcp4", fmt.Sprintf("127.0.0.1:%d", lo+1)},
		{"tcp6", fmt.Sprintf("[::1]:%d", lo+2)},
	}
	held := map[int]string{}
	var notes []string
	for i, h := range holders {
		l, err := net.Listen(h.network, h.addr)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not held (%v)", h.addr, err))
			continue
		}
		defer l.Close()
		held[lo+i] = h.addr
	}
	if len(held) == 0 {
		notRun(t, f, "could not listen on any of 0.0.0.0, 127.0.0.1, ::1")
	}
	r := e.must("up", "a")
	wa := worldOf(t, e, "a")
	a := e.status().world(t, wa)
	named, skipped, saidByUp := 0, 0, 0
	want := fmt.Sprintf("pid %d", os.Getpid())
	for p, addr := range held {
		if a.Ports[0] <= p && p <= a.Ports[1] {
			t.Errorf("world a got block %v holding port %d, which %s holds", a.Ports, p, addr)
		} else {
			skipped++
		}
		if o := ports.Owner(p); strings.Contains(o, want) {
			named++
		} else {
			t.Errorf("ports.Owner(%d) = %q for the holder on %s; want it to name %s", p, o, addr, want)
		}
		if strings.Contains(r.stderr+r.stdout, strconv.Itoa(p)) {
			saidByUp++
		}
	}
	// Adopted blocks are reserved before any new allocation: kill the
	// daemon, and the first call after it is an up of another world.
	kill9Daemon(t, e)
	e.must("up", "-q", "b")
	st := e.status()
	a2, b := st.world(t, wa), st.world(t, worldOf(t, e, "b"))
	overlap := b.Ports[0] <= a2.Ports[1] && a2.Ports[0] <= b.Ports[1]
	if overlap || a2.Ports != a.Ports {
		t.Errorf("after kill -9: a's block %v (was %v), b's new block %v overlap=%v", a2.Ports, a.Ports, b.Ports, overlap)
	}
	f.Result = fmt.Sprintf("%d of %d held ports skipped (0.0.0.0, 127.0.0.1, ::1), owner named by ports.Owner for %d; `up` names %d of them with their holders; after kill -9 the adopted block %v kept and the next up got %v (overlap: %v)",
		skipped, len(held), named, saidByUp, a2.Ports, b.Ports, overlap)
	if saidByUp < len(held) {
		f.detail("gap: a fresh allocation that skips a held port does not say so; only a kept block that lost a port names the holder (ports_held, TestKeptPortTakenMovesBlock)")
	}
	for _, n := range notes {
		f.detail("%s", n)
	}
}

// backendPy is the proxy case's backend: /echo answers the request headers
// as JSON (with a hop-by-hop header of its own), /ws completes a WebSocket
// handshake reporting the headers it saw, /sse sends one event, waits 1.5s,
// sends another, /die drops the connection without answering. Every
// request's path is appended to the log file.
const backendPy = `
import base64, hashlib, json, socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, logf = int(sys.argv[1]), sys.argv[2]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        with open(logf, "a") as f:
            f.write(self.path + " " + str(self.headers.get("Host")) + "\n")
        seen = json.dumps({k.lower(): v for k, v in self.headers.items()})
        if self.path.startswith("/ws"):
            key = self.headers.get("Sec-WebSocket-Key", "")
            acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", acc)
            self.send_header("X-Seen", seen)
            self.end_headers()
            self.wfile.flush()
            time.sleep(0.3)
            self.close_connection = True
            return
        if self.path.startswith("/sse"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"data: one\n\n"); self.wfile.flush()
            time.sleep(1.5)
            self.wfile.write(b"data: two\n\n"); self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/die"):
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        body = seen.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "X-Resp-Hop")
        self.send_header("X-Resp-Hop", "1")
        self.end_headers()
        self.wfile.write(body)
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
`

// rawHTTP sends one raw request to addr and reads the response.
func rawHTTP(addr, req string) (*http.Response, string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return nil, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, "", err
	}
	var body []byte
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	return resp, string(body), nil
}

func caseProxy(t *testing.T, tr tier, f *figure) {
	e := newEnv(t, `
[project]
name = "edge"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 backend.py ${self.port} requests.log"
ports  = ["http"]
url    = "web"
health = { tcp = "127.0.0.1:${self.port}", timeout = "30s", interval = "100ms" }

[services.gone]
cmd    = "exec sleep 100850"
ports  = ["http"]
url    = "gone"
health = { exec = "true" } # a backend that never listens, vouched for by a lying check
`)
	os.WriteFile(filepath.Join(e.repo, "backend.py"), []byte(backendPy), 0o644)
	e.git("add", "backend.py")
	e.git("commit", "-q", "-m", "backend")
	e.must("up", "-q", "p")
	w := e.status().world(t, worldOf(t, e, "p"))
	u, err := url.Parse(w.service(t, "web").URL)
	if err != nil || u.Port() == "" {
		t.Fatalf("web's URL %q has no proxy port", w.service(t, "web").URL)
	}
	proxy := "127.0.0.1:" + u.Port()
	host := u.Hostname()
	gu, _ := url.Parse(w.service(t, "gone").URL)
	logPath := filepath.Join(w.Path, "requests.log")

	// Hostile Host headers: 421 or the listing, never forwarded.
	hostile := []struct{ name, req string }{
		{"evil.example", "GET /probe-1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"},
		{"127.0.0.1.evil.com", "GET /probe-2 HTTP/1.1\r\nHost: 127.0.0.1.evil.com\r\nConnection: close\r\n\r\n"},
		{"route.localhost.evil.com", "GET /probe-3 HTTP/1.1\r\nHost: " + host + ".evil.com\r\nConnection: close\r\n\r\n"},
		{"unknown .localhost", "GET /probe-4 HTTP/1.1\r\nHost: nosuch.edge.localhost\r\nConnection: close\r\n\r\n"},
		{"missing Host (HTTP/1.0)", "GET /probe-5 HTTP/1.0\r\n\r\n"},
		{"missing Host (HTTP/1.1)", "GET /probe-6 HTTP/1.1\r\nConnection: close\r\n\r\n"},
		{"IP literal 127.0.0.1", "GET /probe-7 HTTP/1.1\r\nHost: " + proxy + "\r\nConnection: close\r\n\r\n"},
		{"IP literal [::1]", "GET /probe-8 HTTP/1.1\r\nHost: [::1]:" + u.Port() + "\r\nConnection: close\r\n\r\n"},
	}
	var hostileRes []string
	for _, h := range hostile {
		resp, body, err := rawHTTP(proxy, h.req)
		if err != nil {
			t.Errorf("hostile Host %s: %v", h.name, err)
			continue
		}
		ok := resp.StatusCode == http.StatusMisdirectedRequest || resp.StatusCode == http.StatusBadRequest ||
			(resp.StatusCode == http.StatusNotFound && strings.Contains(h.name, ".localhost"))
		if !ok {
			t.Errorf("hostile Host %s: status %d; want 421 (or the 404 listing for an unknown .localhost name)", h.name, resp.StatusCode)
		}
		if resp.StatusCode == http.StatusMisdirectedRequest && strings.Contains(body, host) {
			t.Errorf("hostile Host %s: the 421 page lists routes", h.name)
		}
		hostileRes = append(hostileRes, fmt.Sprintf("%s→%d", h.name, resp.StatusCode))
	}

	// Hop-by-hop headers: stripped both ways.
	resp, body, err := rawHTTP(proxy, "GET /echo HTTP/1.1\r\nHost: "+host+"\r\nConnection: X-Hop, close\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nOrigin: http://app.example:3000\r\n\r\n")
	hopOK := false
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET /echo through the proxy: %v %v", resp, err)
	} else {
		leaked := []string{}
		for _, h := range []string{`"x-hop"`, `"keep-alive"`, `"proxy-connection"`} {
			if strings.Contains(body, h) {
				leaked = append(leaked, h)
			}
		}
		if resp.Header.Get("X-Resp-Hop") != "" {
			leaked = append(leaked, "response X-Resp-Hop")
		}
		if len(leaked) > 0 {
			t.Errorf("hop-by-hop headers passed the proxy: %v (backend saw %s)", leaked, body)
		}
		if !strings.Contains(body, `"origin": "http://app.example:3000"`) {
			t.Errorf("Origin not passed as it was: backend saw %s", body)
		}
		hopOK = len(leaked) == 0
	}

	// WebSocket: the upgrade reaches the backend with Origin untouched and
	// the listed hop-by-hop header gone.
	wsReq := "GET /ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade, X-Hop\r\nX-Hop: 1\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://app.example:3000\r\n\r\n"
	wsOK := false
	if resp, _, err := rawHTTP(proxy, wsReq); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("WebSocket upgrade through the proxy: %v %v", resp, err)
	} else {
		seen := resp.Header.Get("X-Seen")
		wsOK = strings.Contains(seen, `"origin": "http://app.example:3000"`) && !strings.Contains(seen, `"x-hop"`)
		if !wsOK {
			t.Errorf("WebSocket upgrade: backend saw %s; want Origin untouched and no X-Hop", seen)
		}
	}

	// SSE: the first event arrives before the backend sends the second.
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil}}
	req, _ := http.NewRequest("GET", "http://"+proxy+"/sse", nil)
	req.Host = host
	t0 := time.Now()
	var ttfb, second time.Duration
	if resp, err := c.Do(req); err != nil {
		t.Errorf("SSE through the proxy: %v", err)
	} else {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if strings.HasPrefix(line, "data: one") {
				ttfb = time.Since(t0)
			}
			if strings.HasPrefix(line, "data: two") {
				second = time.Since(t0)
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if ttfb == 0 || second == 0 || second-ttfb < time.Second {
			t.Errorf("SSE buffered: first event at %s, second at %s (the backend waits 1.5s between them)", ttfb, second)
		}
	}

	// Dead backends: one that drops the connection, one that is not
	// listening at all.
	dead := func(h, path string) (int, bool) {
		resp, body, err := rawHTTP(proxy, "GET "+path+" HTTP/1.1\r\nHost: "+h+"\r\nConnection: close\r\nAccept: text/html\r\n\r\n")
		if err != nil {
			t.Errorf("GET %s%s: %v", h, path, err)
			return 0, false
		}
		return resp.StatusCode, strings.Contains(body, strings.SplitN(h, ".", 2)[0])
	}
	dieCode, dieNamed := dead(host, "/die")
	goneCode, goneNamed := dead(gu.Hostname(), "/")
	if dieCode != http.StatusBadGateway || !dieNamed {
		t.Errorf("backend that drops the connection: status %d, names the service %v; want 502 naming it", dieCode, dieNamed)
	}
	if (goneCode != http.StatusBadGateway && goneCode != http.StatusServiceUnavailable) || !goneNamed {
		t.Errorf("backend not listening: status %d, names the service %v; want 502/503 naming it", goneCode, goneNamed)
	}

	forwarded := 0
	for _, line := range strings.Split(read(logPath), "\n") {
		if strings.HasPrefix(line, "/probe-") {
			forwarded++
			t.Errorf("a hostile request reached the backend: %s", line)
		}
	}
	f.Result = fmt.Sprintf("hostile Hosts %s; %d forwarded; hop-by-hop stripped both ways %v; WebSocket Origin untouched and hop-by-hop stripped %v; SSE first byte %s, second event %s (unbuffered); backend dropping the connection → %d naming the service %v; backend not listening → %d (the retrying \"unavailable\" page) naming it %v",
		strings.Join(hostileRes, ", "), forwarded, hopOK, wsOK, ttfb.Round(time.Millisecond), second.Round(time.Millisecond), dieCode, dieNamed, goneCode, goneNamed)
}

func caseSecrets(t *testing.T, tr tier, f *figure) {
	const secret = "Rel1ab-S3cret/Value+9"
	half1, half2 := secret[:10], secret[10:]
	e := newEnv(t, `
[project]
name = "hush"
port_range = PORTRANGE

[services.leaky]
env = { S = "${env.REL_SECRET}" }
cmd = """
echo "raw $S"
printf %s "$S" | base64
python3 -c 'import os, urllib.parse as u; print("url", u.quote_plus(os.environ["S"]))'
printf '%s\n' "$S" | cut -c1-10
printf '%s\n' "$S" | cut -c11-
echo end-of-leaks
exec sleep 100860
"""
`)
	e.extra = []string{"REL_SECRET=" + secret}
	e.must("up", "-q", "main")
	forms := []struct{ name, text string }{
		{"raw", secret},
		{"base64", base64.StdEncoding.EncodeToString([]byte(secret))},
		{"url-encoded", url.QueryEscape(secret)},
		{"split over lines", half1 + "\n" + half2},
	}
	var logs string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		logs = e.must("logs", "main", "leaky", "-n", "0").stdout
		if strings.Contains(logs, "end-of-leaks") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	wt := worldOf(t, e, "main")
	logFile := read(filepath.Join(e.home, "logs", e.project, wt, "leaky.log"))
	env := e.binky("env", "main")
	mcp := e.startMCP("REL_SECRET=" + secret)
	mcpLogs := mcp.call("logs", map[string]any{"worktree": "main", "service": "leaky"}, "")
	mcpStatus := mcp.call("status", nil, "")
	mcpEnv := mcp.call("env", map[string]any{"worktree": "main"}, "")
	places := []struct {
		name     string
		text     string
		mustHide bool
	}{
		{"log file on disk (the service's own output)", logFile, false},
		{"binky logs", logs, true},
		{"events.log", read(filepath.Join(e.home, "events.log")), true},
		{"daemon.log", read(filepath.Join(e.home, "daemon.log")), true},
		{"binky status", e.must("status").stdout + e.must("status", "--json").stdout, true},
		{"binky env (hands out credentials by design)", env.stdout + env.stderr, false},
		{"MCP logs", mcpLogs.json + mcpLogs.summary, true},
		{"MCP status", mcpStatus.json + mcpStatus.summary, true},
		{"MCP env (by design)", mcpEnv.json + mcpEnv.summary, false},
	}
	if !strings.Contains(logFile, secret) {
		t.Errorf("the service never printed the secret (log file: %q): the case proves nothing", logFile)
	}
	hidden, total := 0, 0
	for _, p := range places {
		var shown []string
		for _, fm := range forms {
			leak := strings.Contains(p.text, fm.text)
			if fm.name == "split over lines" {
				leak = leak || strings.Contains(p.text, half2)
			}
			if leak {
				shown = append(shown, fm.name)
				if p.mustHide {
					t.Errorf("%s shows the secret %s", p.name, fm.name)
				}
			}
			if p.mustHide {
				total++
				if !leak {
					hidden++
				}
			}
		}
		if len(shown) == 0 {
			f.detail("%s: no form shown", p.name)
		} else {
			f.detail("%s: shows %s", p.name, strings.Join(shown, ", "))
		}
	}
	f.Result = fmt.Sprintf("%d of %d (place × form) redacted in binky logs, events.log, daemon.log, status, MCP logs and MCP status for raw, base64, URL-encoded and split-over-lines; the log file on disk holds the service's own output; env (CLI and MCP) deliberately hands out the world's coordinates", hidden, total)
}

// escapees lists live processes running `sleep arg` in e's directories.
func escapees(e *env, arg string) []int {
	base := filepath.Dir(e.repo)
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if string(cmd) == "sleep\x00"+arg+"\x00" && strings.HasPrefix(cwd, base) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupV2 says whether this machine would let Binky track a world by a
// cgroup v2 of its own: where the hierarchy is and whether a directory can
// be made in it.
func cgroupV2() string {
	b, _ := os.ReadFile("/proc/self/mounts")
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 3 || fs[2] != "cgroup2" {
			continue
		}
		probe := filepath.Join(fs[1], fmt.Sprintf("binky-probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil {
			return fmt.Sprintf("cgroup v2 at %s, not writable (%v)", fs[1], err)
		}
		os.Remove(probe)
		return fmt.Sprintf("cgroup v2 at %s, writable", fs[1])
	}
	return "no cgroup v2 hierarchy mounted"
}

func caseEscaped(t *testing.T, tr tier, f *figure) {
	e := newEnv(t, `
[project]
name = "escape"
port_range = PORTRANGE

[services.spawner]
cmd = """
( setsid sh -c 'exec sleep 100871' </dev/null >/dev/null 2>&1 & )
( env -u BINKY_SERVICE setsid sh -c 'exec sleep 100872' </dev/null >/dev/null 2>&1 & )
exec sleep 100870
"""
`)
	e.must("up", "-q", "x")
	var kept, stripped []int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		kept, stripped = escapees(e, "100871"), escapees(e, "100872")
		if len(kept) > 0 && len(stripped) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(kept) != 1 || len(stripped) != 1 {
		t.Fatalf("the escaped daemons did not start: %v %v", kept, stripped)
	}
	t.Cleanup(func() { syscall.Kill(stripped[0], syscall.SIGKILL); syscall.Kill(kept[0], syscall.SIGKILL) })
	spawner := e.status().world(t, worldOf(t, e, "x")).service(t, "spawner").Pid
	for _, pid := range append(kept, stripped...) {
		if sid, _ := unix.Getsid(pid); sid == spawner || sid == 0 {
			t.Errorf("escapee %d did not leave the service's session (sid %d)", pid, sid)
		}
	}
	down := e.binky("down", "x")
	keptAlive, strippedAlive := alive(kept[0]), alive(stripped[0])
	if down.code == 0 && keptAlive {
		t.Errorf("down exited 0 while the setsid'd daemon that kept BINKY_SERVICE (pid %d) lives", kept[0])
	}
	cg := cgroupV2()
	mechanism := "BINKY_SERVICE marker scan (supervisor.EndMarked); no cgroup tracking: " + cg
	if strings.Contains(e.daemonLog(), "tracked by cgroup v2") {
		mechanism = "a cgroup v2 per world (clone into cgroup; cgroup.kill on down), plus the BINKY_SERVICE marker scan"
	}
	f.Result = fmt.Sprintf("mechanism: %s. down exit %d; the setsid'd daemon that kept its environment: %s; one that also dropped BINKY_SERVICE: %s",
		mechanism, down.code, aliveWord(keptAlive), aliveWord(strippedAlive))
	if strippedAlive {
		f.Status = "gap"
		f.detail("gap: a descendant that leaves its session and drops BINKY_SERVICE from its environment survives down, and down exits %d; a cgroup per world would end it (%s)", down.code, cg)
	}
}

func aliveWord(a bool) string {
	if a {
		return "survived"
	}
	return "ended"
}
