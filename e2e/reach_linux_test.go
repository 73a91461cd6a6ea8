//go:build linux

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reachWorld runs on the host: web (HTTP, with a streamed answer) and
// echo, a plain TCP service exposed like a database would be.
const reachWorld = `
[project]
name = "reach"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 web.py ${self.port}"
url    = "web"
health = "http://127.0.0.1:${self.port}/"

[services.echo]
cmd   = "exec python3 echo.py ${self.port}"
ports = ["tcp"]

[agents]
expose = ["web", "echo"]
`

const reachWeb = `import sys, http.server, base64, hashlib
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer, sent at once: no Nagle and delayed-ACK wait
    # (40 ms) between the head and the body.
    wbufsize = 65536
    disable_nagle_algorithm = True
    def do_GET(self):
        if self.path == "/ws":
            key = self.headers.get("Sec-WebSocket-Key", "")
            acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", acc)
            self.end_headers()
            self.wfile.flush()
            # Upgraded: each line back, both ways at once.
            for line in self.rfile:
                self.wfile.write(b"ws " + line)
                self.wfile.flush()
            self.close_connection = True
            return
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(5):
                b = ("chunk %d\n" % i).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        b = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

const reachEcho = `import sys, socketserver
class H(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write(b"echo " + line)
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// reachEnv is a local home driving a host "box" whose clone of the
// project (reachWorld) sits at repo.
type reachEnv struct {
	*remoteEnv
	hostRepo string
}

func newReachEnv(t *testing.T) *reachEnv {
	t.Helper()
	needCommand(t, "python3", "apt-get install python3")
	return newReachEnvWith(t, newSSHHost(t), reachWorld, map[string]string{"web.py": reachWeb, "echo.py": reachEcho})
}

// newReachEnvWith is newReachEnv for host h with another project: world
// (its binky.toml) and files beside it.
func newReachEnvWith(t *testing.T, h *sshHost, world string, files map[string]string) *reachEnv {
	t.Helper()
	needCommand(t, "ss", "apt-get install iproute2")
	e := newEnv(t, world)
	cfg := h.client(filepath.Dir(e.home), "root", nil)
	r := &remoteEnv{env: e, host: h, hostHome: filepath.Join(h.dir, "binky-home")}
	e.must("host", "add", "box", "root@"+h.addr+":22", "--ssh-config", cfg, "--remote-home", r.hostHome, "--binky", filepath.Join(binDir, "binky"))
	t.Cleanup(r.cleanupHost)
	dir := filepath.Join(h.dir, "src", "reach")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "binky.toml"), []byte(e.render(strings.ReplaceAll(world, "PORTRANGE", fmt.Sprintf("[%d, %d]", e.rng[0]+30, e.rng[1])))), 0o644)
	for name, body := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	e.commitNew(dir)
	return &reachEnv{remoteEnv: r, hostRepo: dir}
}

// localStatus is this machine's status: its own worlds and the remote
// ones it reaches.
type localStatus struct {
	Worlds []worldJSON `json:"worlds"`
	Remote []struct {
		Host string `json:"host"`
		worldJSON
	} `json:"remote"`
}

func (r *reachEnv) localStatus() localStatus {
	r.t.Helper()
	var s localStatus
	out := r.must("status", "--json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		r.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return s
}

func (r *reachEnv) proxyPort() int {
	r.t.Helper()
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(r.must("daemon", "status", "--json").stdout), &ds)
	if ds.ProxyPort == 0 {
		r.t.Fatal("the local daemon has no proxy port")
	}
	return ds.ProxyPort
}

// reachProxy GETs path of name through the local proxy.
func reachProxy(port int, name, path string) (int, string, http.Header, error) {
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
	req.Host = name
	req.Header.Set("Accept", "text/html")
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, err
}

// reachViaTLS GETs / of name on the local proxy's https port, trusting
// only the local home's CA.
func reachViaTLS(r *reachEnv, name string) (int, string, error) {
	r.t.Helper()
	var ds struct {
		TLSPort int `json:"proxy_tls_port"`
	}
	json.Unmarshal([]byte(r.must("daemon", "status", "--json").stdout), &ds)
	if ds.TLSPort == 0 {
		r.t.Fatal("the local daemon serves no https")
	}
	pem, err := os.ReadFile(filepath.Join(r.home, "certs", "ca", "root.crt"))
	if err != nil {
		r.t.Fatalf("the local CA: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	d := &net.Dialer{Timeout: 20 * time.Second}
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, "127.0.0.1:"+strconv.Itoa(ds.TLSPort))
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	resp, err := c.Get(fmt.Sprintf("https://%s:%d/", name, ds.TLSPort))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// listening says whether something listens on this machine's loopback
// port p (ss, not a connection: no side effect).
func listening(t *testing.T, p int) bool {
	t.Helper()
	out, err := exec.Command("ss", "-Hltn", "sport = :"+strconv.Itoa(p)).CombinedOutput()
	if err != nil {
		t.Fatalf("ss: %v %s", err, out)
	}
	return strings.TrimSpace(string(out)) != ""
}

// listenerPid is the pid of the process listening on this machine's port
// p (the tunnel's ssh master for a forward).
func listenerPid(t *testing.T, p int) int {
	t.Helper()
	out, _ := exec.Command("ss", "-Hltnp", "sport = :"+strconv.Itoa(p)).CombinedOutput()
	s := string(out)
	i := strings.Index(s, "pid=")
	if i < 0 {
		t.Fatalf("no process listens on port %d: %s", p, s)
	}
	n, _ := strconv.Atoi(strings.FieldsFunc(s[i+4:], func(r rune) bool { return r < '0' || r > '9' })[0])
	return n
}

// echoes dials addr (host:port) and expects its line back.
func echoes(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "ping\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "echo ping\n" {
		return fmt.Errorf("answer %q", line)
	}
	return nil
}

// upgradeEcho upgrades a connection to name's /ws through the local
// proxy and has two lines echoed over it.
func upgradeEcho(proxyPort int, name string) error {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(proxyPort), 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", name)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	for _, msg := range []string{"one\n", "two\n"} {
		io.WriteString(c, msg)
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "ws "+msg {
			return fmt.Errorf("echo %q; want %q", line, "ws "+msg)
		}
	}
	return nil
}

// restartSSHD ends the host's sshd and every connection to it, then,
// once again() says so, starts it again with the same config.
func restartSSHD(t *testing.T, h *sshHost, again func()) {
	t.Helper()
	h.sshd.Process.Kill()
	h.sshd.Wait()
	killSSHSessions(t, h)
	again()
	cfgPath := filepath.Join(h.dir, "sshd_config")
	h.sshd = exec.Command("ip", "netns", "exec", h.ns, sshdBin, "-D", "-e", "-f", cfgPath)
	logf, _ := os.OpenFile(filepath.Join(h.dir, "sshd.log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	h.sshd.Stdout, h.sshd.Stderr = logf, logf
	if err := h.sshd.Start(); err != nil {
		t.Fatal(err)
	}
}

// TestReachRemoteWorld: a world up on the host answers on this machine —
// its proxied name (a streamed answer and an upgraded WebSocket
// connection too), its env URL, its exposed TCP
// service — through the local daemon's forwards over ssh, which nothing
// else reaches; the forwards survive their master killed and the host's
// sshd restarted (the page says "reconnecting to box" meanwhile); down
// and remove leave no forward or route here; a local daemon started again
// reaches the host again by itself.
func TestReachRemoteWorld(t *testing.T) {
	r := newReachEnv(t)
	r.must("--host", "box", "up", "-q", "feat", "--repo", r.hostRepo)
	rw := r.remoteStatus().world(t, "feat")
	webPort := rw.service(t, "web").Port
	echoPort := rw.service(t, "echo").Port
	if webPort == 0 || echoPort == 0 {
		t.Fatalf("remote world's ports: %+v", rw)
	}
	// The host's ports are not this machine's.
	for _, p := range []int{webPort, echoPort} {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), 2*time.Second); err == nil {
			c.Close()
			t.Fatalf("the host's port %d answers on this machine's loopback without a forward", p)
		}
	}

	// status here lists it, marked remote.
	ls := r.localStatus()
	if len(ls.Worlds) != 0 || len(ls.Remote) != 1 || ls.Remote[0].Host != "box" || ls.Remote[0].Worktree != "feat" {
		t.Fatalf("local status: %+v", ls)
	}
	pp := r.proxyPort()
	name := "web.feat." + r.project + ".localhost"
	if got, want := ls.Remote[0].service(t, "web").URL, fmt.Sprintf("http://%s:%d", name, pp); got != want {
		t.Errorf("local status gives the remote web %q; want %q (the local proxy)", got, want)
	}
	if out := r.must("status").stdout; !strings.Contains(out, "remote: on host box") {
		t.Errorf("status does not mark the remote world:\n%s", out)
	}

	// Its name answers through the local proxy, streaming included.
	code, body, _, err := reachProxy(pp, name, "/")
	if err != nil || code != 200 || body != "hello from the host\n" {
		t.Fatalf("GET %s through the local proxy: %d %q %v\n%s", name, code, body, err, r.daemonLog())
	}
	code, body, _, err = reachProxy(pp, name, "/stream")
	if err != nil || code != 200 || !strings.Contains(body, "chunk 0\n") || !strings.Contains(body, "chunk 4\n") {
		t.Fatalf("GET %s/stream through the local proxy: %d %q %v", name, code, body, err)
	}

	// An upgraded (WebSocket) connection carries both ways.
	if err := upgradeEcho(pp, name); err != nil {
		t.Fatalf("WebSocket upgrade to %s through the local proxy: %v", name, err)
	}

	// The dashboard shows it apart, marked with its host, by its local URL.
	if code, body, _, err := reachProxy(pp, "binky.localhost", "/"); err != nil || code != 200 ||
		!strings.Contains(body, "On other hosts") || !strings.Contains(body, "on host box") || !strings.Contains(body, fmt.Sprintf("http://%s:%d", name, pp)) {
		t.Errorf("the dashboard does not show the remote world: %d %v\n%s", code, err, body)
	}

	// And over https, with a certificate of this machine's CA.
	if code, body, err := reachViaTLS(r, name); err != nil || code != 200 || body != "hello from the host\n" {
		t.Fatalf("GET https://%s through the local proxy, verified against the local CA: %d %q %v\n%s", name, code, body, err, r.daemonLog())
	}

	// env: coordinates that answer here.
	var env map[string]string
	out := r.must("--host", "box", "env", "feat").stdout
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("env: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("http://%s:%d", name, pp); env["web"] != want {
		t.Errorf("env web = %q; want %q (the local proxy)", env["web"], want)
	}
	dot := r.must("--host", "box", "env", "feat", "--dotenv").stdout
	direct := ""
	for _, line := range strings.Split(dot, "\n") {
		if v, ok := strings.CutPrefix(line, "BINKY_WEB_DIRECT_URL="); ok {
			direct = strings.Trim(v, "'")
		}
	}
	if direct == "" || strings.Contains(direct, ":"+strconv.Itoa(webPort)) {
		t.Fatalf("env --dotenv's direct web URL %q: want a local forward, not the host's port %d\n%s", direct, webPort, dot)
	}
	if resp, err := http.Get(direct + "/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s (env's direct URL): %v %v", direct, resp, err)
	} else {
		resp.Body.Close()
	}
	echoAddr := env["echo"]
	i := strings.LastIndex(echoAddr, "127.0.0.1:")
	if i < 0 {
		t.Fatalf("env echo = %q; want a local 127.0.0.1 address", echoAddr)
	}
	echoLocal := strings.TrimRight(echoAddr[i:], "/")
	if echoLocal == "127.0.0.1:"+strconv.Itoa(echoPort) {
		t.Fatalf("env echo = %q: the host's own port, not a forward", echoAddr)
	}
	if err := echoes(echoLocal); err != nil {
		t.Fatalf("echo at %s (env's coordinate): %v", echoLocal, err)
	}
	remoteOut := r.must("--host", "box", "env", "feat", "--remote").stdout
	if !strings.Contains(remoteOut, strconv.Itoa(echoPort)) {
		t.Errorf("env --remote does not give the host's own echo port %d:\n%s", echoPort, remoteOut)
	}
	webLocal, _ := strconv.Atoi(direct[strings.LastIndexByte(direct, ':')+1:])
	echoLocalPort, _ := strconv.Atoi(echoLocal[strings.LastIndexByte(echoLocal, ':')+1:])
	if !listening(t, webLocal) || !listening(t, echoLocalPort) {
		t.Fatalf("the forwards %d and %d do not listen here", webLocal, echoLocalPort)
	}

	// The master killed: it comes back, on the same local ports.
	master := listenerPid(t, webLocal)
	exec.Command("kill", "-KILL", strconv.Itoa(master)).Run()
	waitFor(t, "the proxied name to answer again after its master was killed", func() bool {
		code, _, _, _ := reachProxy(pp, name, "/")
		return code == 200 && listenerPid(t, webLocal) != master
	})
	if err := echoes(echoLocal); err != nil {
		t.Fatalf("echo at %s after the master came back: %v", echoLocal, err)
	}

	// The host's sshd restarted: meanwhile the page says reconnecting.
	restartSSHD(t, r.host, func() {
		// The master saw its connection cut; end it at once if it has
		// not noticed yet.
		out, _ := exec.Command("ss", "-Hltnp", "sport = :"+strconv.Itoa(webLocal)).CombinedOutput()
		if i := strings.Index(string(out), "pid="); i >= 0 {
			pid := strings.FieldsFunc(string(out)[i+4:], func(r rune) bool { return r < '0' || r > '9' })[0]
			exec.Command("kill", "-KILL", pid).Run()
		}
		waitFor(t, "the page to say reconnecting to box", func() bool {
			code, body, _, _ := reachProxy(pp, name, "/")
			return code == 503 && strings.Contains(body, "reconnecting to box")
		})
		if s := r.localStatus(); len(s.Remote) != 1 {
			t.Errorf("while reconnecting, status lost the remote world: %+v", s)
		}
	})
	waitFor(t, "the proxied name to answer after sshd restarted", func() bool {
		code, _, _, _ := reachProxy(pp, name, "/")
		return code == 200
	})
	if err := echoes(echoLocal); err != nil {
		t.Fatalf("echo at %s after sshd restarted: %v", echoLocal, err)
	}

	// The local daemon restarted: it reaches the host again by itself.
	r.must("daemon", "stop")
	for i := 0; listening(t, webLocal); i++ {
		if i == 600 {
			out, _ := exec.Command("ss", "-Hltnp", "sport = :"+strconv.Itoa(webLocal)).CombinedOutput()
			ps, _ := exec.Command("ps", "-ef").CombinedOutput()
			var sshLines []string
			for _, l := range strings.Split(string(ps), "\n") {
				if strings.Contains(l, "ssh ") {
					sshLines = append(sshLines, l)
				}
			}
			t.Fatalf("a forward still listens after the local daemon stopped: %s\n%s\n%s", out, strings.Join(sshLines, "\n"), r.daemonLog())
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.must("status")
	pp = r.proxyPort()
	waitFor(t, "the proxied name to answer after the local daemon restarted", func() bool {
		code, _, _, _ := reachProxy(pp, name, "/")
		return code == 200
	})
	out = r.must("--host", "box", "env", "feat", "--dotenv").stdout
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "BINKY_WEB_DIRECT_URL="); ok {
			direct = strings.Trim(v, "'")
		}
	}
	webLocal, _ = strconv.Atoi(direct[strings.LastIndexByte(direct, ':')+1:])
	out = r.must("--host", "box", "env", "feat").stdout
	env = nil
	json.Unmarshal([]byte(out), &env)
	echoAddr = env["echo"]
	echoLocal = strings.TrimRight(echoAddr[strings.LastIndex(echoAddr, "127.0.0.1:"):], "/")
	echoLocalPort, _ = strconv.Atoi(echoLocal[strings.LastIndexByte(echoLocal, ':')+1:])

	// down leaves no forward and no route here.
	r.must("--host", "box", "down", "-q", "feat")
	if listening(t, webLocal) || listening(t, echoLocalPort) {
		t.Errorf("a forward still listens here after down")
	}
	if code, _, _, _ := reachProxy(pp, name, "/"); code != 404 {
		t.Errorf("after down, %s through the local proxy answers %d; want 404 (no route)", name, code)
	}
	if s := r.localStatus(); len(s.Remote) != 0 {
		t.Errorf("after down, status still lists remote worlds: %+v", s.Remote)
	}
	// up again, then remove: the same.
	r.must("--host", "box", "up", "-q", "feat", "--repo", r.hostRepo)
	if code, _, _, _ := reachProxy(pp, name, "/"); code != 200 {
		t.Fatalf("after up again, %s answers %d", name, code)
	}
	r.must("--host", "box", "remove", "-q", "--force", "feat")
	waitFor(t, "no route after remove", func() bool {
		code, _, _, _ := reachProxy(pp, name, "/")
		return code == 404
	})
	if s := r.localStatus(); len(s.Remote) != 0 {
		t.Errorf("after remove, status still lists remote worlds: %+v", s.Remote)
	}
	out2, _ := exec.Command("ss", "-Hltnp").CombinedOutput()
	for _, line := range strings.Split(string(out2), "\n") {
		if strings.Contains(line, `"ssh"`) && strings.Contains(line, "127.0.0.1:") {
			if p := line[strings.Index(line, "127.0.0.1:")+10:]; strings.HasPrefix(p, strconv.Itoa(webLocal)+" ") || strings.HasPrefix(p, strconv.Itoa(echoLocalPort)+" ") {
				t.Errorf("an ssh forward still listens after remove: %s", line)
			}
		}
	}
}

// TestReachThroughput measures proxied requests per second to a host's
// world through the SSH road (the local proxy, the tunnel's forward)
// against a direct `ssh -L` forward to the same port: medians of 5
// rounds of 500 sequential keep-alive GETs each, logged (no assertion on
// speed).
func TestReachThroughput(t *testing.T) {
	if os.Getenv("BINKY_MEASURE_REMOTE") == "" {
		t.Skip("a measurement: BINKY_MEASURE_REMOTE=1 runs it")
	}
	r := newReachEnv(t)
	r.must("--host", "box", "up", "-q", "feat", "--repo", r.hostRepo)
	webPort := r.remoteStatus().world(t, "feat").service(t, "web").Port
	pp := r.proxyPort()
	cfg := filepath.Join(filepath.Dir(r.home), "ssh_config")
	lp := r.rng[1] - 1
	direct := exec.Command("ssh", "-F", cfg, "-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("127.0.0.1:%d:127.0.0.1:%d", lp, webPort), "root@"+r.host.addr)
	if err := direct.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { direct.Process.Kill(); direct.Wait() }()
	waitFor(t, "the direct ssh -L forward", func() bool { return listening(t, lp) })
	rate := func(url, host string) float64 {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		const n = 500
		start := time.Now()
		for range n {
			req, _ := http.NewRequest("GET", url, nil)
			if host != "" {
				req.Host = host
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d", url, resp.StatusCode)
			}
		}
		return n / time.Since(start).Seconds()
	}
	median := func(f func() float64) float64 {
		var xs []float64
		for range 5 {
			xs = append(xs, f())
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	proxied := median(func() float64 {
		return rate(fmt.Sprintf("http://127.0.0.1:%d/", pp), "web.feat."+r.project+".localhost")
	})
	plain := median(func() float64 { return rate(fmt.Sprintf("http://127.0.0.1:%d/", lp), "") })
	t.Logf("sequential keep-alive GETs of the host's web: through the local proxy and the tunnel median %.0f req/s; a direct ssh -L forward median %.0f req/s (%.0f%%)", proxied, plain, 100*proxied/plain)
}
