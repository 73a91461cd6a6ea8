package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/internal/testroot"
)

// The world of TestBrowserLogsInChromium: one url service, a small
// Python server with a page that logs an error, makes two failing
// fetches and throws, a page whose Content-Security-Policy forbids inline scripts,
// and a JSON document.
const browserLogsConfig = `
[project]
name = "brlogs"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 serve.py ${self.port}"
url    = "web"
health = "http://127.0.0.1:${self.port}/health"

[agents]
browser_logs = true
verify = ["true"]
`

const browserLogsServer = `import http.server, sys

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>app</title></head>
<body><p id="app">app</p>
<script>
console.error("e2e console error", {code: 42});
fetch("/api/missing").then(function (r) { document.getElementById("app").textContent = "api " + r.status; });
fetch("http://127.0.0.1:9/gone").catch(function () {});
setTimeout(function () { throw new Error("e2e uncaught"); }, 0);
</script>
</body></html>
"""

CSP = b"""<!doctype html>
<html><head><title>strict</title></head>
<body><script src="/strict.js"></script></body></html>
"""

ROUTES = {
    "/": ("text/html; charset=utf-8", PAGE, 200, {}),
    "/csp": ("text/html", CSP, 200, {"Content-Security-Policy": "default-src 'self'"}),
    "/strict.js": ("text/javascript", b'console.error("e2e csp page error");', 200, {}),
    "/data.json": ("application/json", b'{"html": "<html><head></head></html>"}', 200, {}),
    "/api/missing": ("application/json", b'{"error": "no such thing"}', 500, {}),
    "/health": ("text/plain", b"ok", 200, {}),
}

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ctype, body, code, extra = ROUTES.get(self.path, ("text/plain", b"not found", 404, {}))
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// browserEntry is one line of `binky logs --browser --json`.
type browserEntry struct {
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Service  string `json:"service"`
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Page     string `json:"page"`
	Source   string `json:"source"`
	Status   int    `json:"status"`
}

func (e *env) browserLog(wt string) []browserEntry {
	e.t.Helper()
	r := e.must("logs", wt, "--browser", "--json")
	var out []browserEntry
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var be browserEntry
		if err := json.Unmarshal([]byte(line), &be); err != nil {
			e.t.Fatalf("logs --browser --json line %q: %v", line, err)
		}
		out = append(out, be)
	}
	return out
}

// TestBrowserLogsInChromium is issue 43's browser logs end to end: a
// real browser loads a world's page through the proxy; its console.error,
// its two failed fetches (a 500, a refused connection) and an uncaught
// error reach `binky logs --browser` (and verify counts them); the page whose CSP forbids inline scripts comes untouched and the
// log says why once; a JSON document asked for as a page is untouched;
// another Unix user's post to the endpoint is refused.
func TestBrowserLogsInChromium(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3") // it serves the pages
	needCommand(t, "chromium", "apt-get install -y chromium")
	e := newEnv(t, browserLogsConfig)
	if err := os.WriteFile(filepath.Join(e.repo, "serve.py"), []byte(browserLogsServer), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git("add", "serve.py")
	e.git("commit", "-q", "-m", "server")
	e.must("up", "-q", "main")
	web := e.status().world(t, "main").service(t, "web")
	if web.URL == "" || web.Port == 0 {
		t.Fatalf("web has no URL or port: %+v", web)
	}

	profile := t.TempDir()
	chromium := func(url string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// Virtual time waits for the page's network requests (its fetch,
		// the script's post) before the DOM is dumped.
		args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + profile, "--virtual-time-budget=10000", "--dump-dom", url}
		cmd := exec.CommandContext(ctx, "chromium", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium --dump-dom %s: %v\n%s", url, err, stderr.Bytes())
		}
		t.Logf("chromium rendered %s: %.300s", url, out)
	}

	// The page with a console error and a failed fetch.
	chromium(web.URL + "/")
	var got []browserEntry
	waitFor(t, "the page's console error, failed fetches and uncaught error in binky logs --browser", func() bool {
		got = e.browserLog("main")
		console, fetch, refused, uncaught := false, false, false, false
		for _, be := range got {
			console = console || be.Kind == "console" && strings.Contains(be.Message, "e2e console error") && strings.Contains(be.Message, `{"code":42}`)
			fetch = fetch || be.Kind == "fetch" && be.Status == 500 && strings.Contains(be.Message, "/api/missing")
			refused = refused || be.Kind == "fetch" && be.Status == 0 && strings.Contains(be.Message, "http://127.0.0.1:9/gone failed")
			// The script is one line: the page's own line numbers hold.
			uncaught = uncaught || be.Kind == "error" && strings.Contains(be.Message, "e2e uncaught") && strings.Contains(be.Source, "/:8:")
		}
		return console && fetch && refused && uncaught
	})
	for _, be := range got {
		if be.Project != e.project || be.Worktree != "main" || be.Service != "web" || !strings.HasPrefix(be.Page, web.URL) {
			t.Errorf("entry %+v; want "+e.project+"/main web, on page %s", be, web.URL)
		}
	}
	text := e.must("logs", "main", "--browser").stdout
	t.Logf("binky logs main --browser:\n%s", text)
	if !strings.Contains(text, "web console: e2e console error") || !strings.Contains(text, "web fetch 500: GET /api/missing answered 500") {
		t.Errorf("binky logs --browser:\n%s\nwant the console error and the failed fetch", text)
	}
	if v := e.must("verify", "main"); !strings.Contains(v.stderr, "browser: 4 error(s) reported by the pages since up (binky logs main --browser)") {
		t.Errorf("verify:\n%s\nwant the two browser errors counted", v.stderr)
	}

	// The page whose CSP forbids inline scripts: untouched (its own
	// script's error is not reported), and the log says why, once.
	direct := fmt.Sprintf("http://127.0.0.1:%d", web.Port)
	u, err := url.Parse(web.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr := "127.0.0.1:" + cmp.Or(u.Port(), "80")
	// navigate asks for base+path as a browser would for a page; base is
	// the proxied URL (dialled at the proxy, with its Host) or direct.
	navigate := func(base, path string) []byte {
		t.Helper()
		target := base + path
		if base == web.URL {
			target = "http://" + proxyAddr + path
		}
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		if base == web.URL {
			req.Host = u.Host
		}
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		req.Header.Set("Sec-Fetch-Dest", "document")
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			t.Fatalf("GET %s%s: %v", base, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	chromium(web.URL + "/csp")
	chromium(web.URL + "/csp")
	for _, path := range []string{"/csp", "/data.json"} {
		if via, want := navigate(web.URL, path), navigate(direct, path); !bytes.Equal(via, want) {
			t.Errorf("%s through the proxy:\n%s\nwant it as the service sent it:\n%s", path, via, want)
		}
	}
	if page := navigate(web.URL, "/"); !bytes.Contains(page, []byte("/__binky/browser-log")) {
		t.Errorf("the page through the proxy has no script:\n%s", page)
	}
	notes := 0
	for _, be := range e.browserLog("main") {
		if strings.Contains(be.Message, "e2e csp page error") {
			t.Errorf("the CSP page reported %+v; it must have no script", be)
		}
		if be.Kind == "note" && strings.Contains(be.Message, "Content-Security-Policy") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notes about the CSP page; want 1", notes)
	}

	// Another Unix user's post is refused and recorded nowhere.
	before := len(e.browserLog("main"))
	endpoint := "http://" + proxyAddr + "/__binky/browser-log"
	t.Run("another user", func(t *testing.T) {
		testroot.Need(t, "to post to the browser log endpoint as another user (uid 65534)")
		cmd := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Host: "+u.Host,
			"-H", "Content-Type: text/plain", "--data", `[{"kind":"console","message":"from another user"}]`, endpoint)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil || string(out) != "403" {
			t.Errorf("post as nobody: %q, %v; want 403", out, err)
		}
	})
	// The owner's post, seen by a follower too.
	follow := exec.Command(filepath.Join(binDir, "binky"), "logs", "main", "--browser", "-f", "-n", "1")
	follow.Dir, follow.Env = e.repo, e.environ()
	var followed syncBuffer
	follow.Stdout, follow.Stderr = &followed, &followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { follow.Process.Kill(); follow.Wait() }()
	waitFor(t, "logs --browser -f to print the last entry", func() bool {
		return strings.Contains(followed.String(), "csp") || strings.Contains(followed.String(), "web ")
	})
	cmd := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Host: "+u.Host,
		"--data", `[{"kind":"console","message":"from the owner"}]`, endpoint)
	if out, err := cmd.Output(); err != nil || string(out) != "204" {
		t.Errorf("post as the owner: %q, %v; want 204", out, err)
	}
	waitFor(t, "logs --browser -f to print the owner's post", func() bool { return strings.Contains(followed.String(), "web console: from the owner") })
	after := e.browserLog("main")
	if len(after) != before+1 || after[len(after)-1].Message != "from the owner" {
		t.Errorf("after the posts the log has %d entries (before %d), last %+v; want only the owner's added", len(after), before, after[len(after)-1])
	}

	// Removed with the world.
	logDir := filepath.Join(e.home, "logs", e.project, "main")
	if _, err := os.Stat(filepath.Join(logDir, "browser.jsonl")); err != nil {
		t.Fatalf("no browser log at %s: %v", logDir, err)
	}
	e.must("remove", "--force", "-q", "main")
	if _, err := os.Stat(filepath.Join(logDir, "browser.jsonl")); err == nil {
		t.Errorf("the browser log outlived its world")
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
