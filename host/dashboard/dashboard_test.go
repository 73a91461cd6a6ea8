package dashboard_test

import (
	"context"
	"errors"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/dashboard"
	"github.com/binkyhq/binky/host/proxy"
)

// fakeSource stands in for the daemon's registry adapter.
type fakeSource struct {
	worlds []dashboard.World
	events []dashboard.Event
	err    error
}

func (f *fakeSource) Worlds(context.Context) ([]dashboard.World, error) { return f.worlds, f.err }
func (f *fakeSource) RecentEvents(_ context.Context, n int) ([]dashboard.Event, error) {
	return f.events[:min(n, len(f.events))], nil
}

var now = time.Date(2026, 11, 25, 14, 30, 0, 0, time.UTC)

func sample(port int) *fakeSource {
	url := func(h string) string { return "http://" + h + ":" + strconv.Itoa(port) }
	return &fakeSource{
		worlds: []dashboard.World{
			{Project: "acme", Worktree: "feat-login-3f2a", Branch: "feat/login", Path: "/src/acme/.worktrees/feat-login-3f2a", State: "running",
				Verify: &dashboard.Verify{Passed: true, At: now.Add(-3 * time.Minute), Summary: "go test ./... && npm test"},
				Services: []dashboard.Service{
					{Name: "web", Kind: "cmd", State: "running", Port: 4101, URL: url("web.feat-login-3f2a.acme.localhost")},
					{Name: "api", Kind: "cmd", State: "running", Port: 4102, URL: url("api.feat-login-3f2a.acme.localhost")},
					{Name: "db", Kind: "adapter", Adapter: "postgres", State: "running", Detail: "acme_feat_login_3f2a"},
					{Name: "cache", Kind: "adapter", Adapter: "redis", State: "running", Detail: "prefix acme:feat-login-3f2a:"},
				}},
			{Project: "acme", Worktree: "main", Path: "/src/acme", State: "running",
				Verify: &dashboard.Verify{Passed: false, At: now.Add(-2 * time.Hour), Summary: "npm test exited 1"},
				Services: []dashboard.Service{
					{Name: "web", Kind: "cmd", State: "restarting", Port: 4001, URL: url("web.main.acme.localhost"), Detail: "exit status 1, retry in 4s"},
					{Name: "api", Kind: "cmd", State: "running", Port: 4002, URL: url("api.main.acme.localhost")},
					{Name: "db", Kind: "adapter", Adapter: "postgres", State: "running", Detail: "acme_main"},
				}},
			{Project: "shop", Worktree: "fix-cart", Branch: "fix/cart", Path: "/src/shop/.worktrees/fix-cart", State: "failed",
				Services: []dashboard.Service{
					{Name: "app", Kind: "cmd", State: "failed", Port: 4203, URL: url("app.fix-cart.shop.localhost"), Detail: "gave up after 5 restarts"},
					{Name: "<script>alert(1)</script>", Kind: "cmd", State: "down"},
				}},
		},
		events: []dashboard.Event{
			{Time: now.Add(-20 * time.Second), Event: "service_restart", Project: "acme", Worktree: "main", Service: "web"},
			{Time: now.Add(-3 * time.Minute), Event: "verify_passed", Project: "acme", Worktree: "feat-login-3f2a"},
			{Time: now.Add(-4 * time.Minute), Event: "clone_fallback", Project: "acme", Worktree: "feat-login-3f2a", Service: "db", Adapter: "postgres", Error: "pg_dump: server version mismatch"},
			{Time: now.Add(-9 * time.Minute), Event: "service_failed", Project: "shop", Worktree: "fix-cart", Service: "app", Error: "gave up after 5 restarts"},
			{Time: now.Add(-1 * time.Hour), Event: "up", Project: "shop", Worktree: "fix-cart"},
		},
	}
}

func fetch(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestDashboardShowsWorlds(t *testing.T) {
	t.Parallel()
	h := dashboard.New(sample(7355), dashboard.Options{Now: func() time.Time { return now }})
	code, body := fetch(t, h, "/")
	if code != http.StatusOK {
		t.Fatalf("status: got %d; want 200", code)
	}
	for _, want := range []string{
		"feat-login-3f2a", "acme", "shop", "fix-cart", // worlds
		`href="http://web.feat-login-3f2a.acme.localhost:7355"`, // links
		">4101<", "restarting", "failed", // ports and states
		"passed", "3m ago", "npm test exited 1", // verify
		"clone_fallback", "pg_dump: server version mismatch", // events
		"3 worlds", "6 of 9 services running",
		`http-equiv="refresh" content="5"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("dashboard contains an unescaped <script>")
	}
	if code, _ := fetch(t, h, "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: got %d; want 404", code)
	}
}

func TestDashboardSourceErrorIsABanner(t *testing.T) {
	t.Parallel()
	src := &fakeSource{err: errors.New("registry locked <b>")}
	code, body := fetch(t, dashboard.New(src, dashboard.Options{}), "/")
	if code != http.StatusServiceUnavailable {
		t.Fatalf("status: got %d; want 503", code)
	}
	if !strings.Contains(body, "could not read worlds: registry locked &lt;b&gt;") {
		t.Errorf("error banner missing or unescaped:\n%s", body)
	}
}

func TestDashboardEmpty(t *testing.T) {
	t.Parallel()
	code, body := fetch(t, dashboard.New(&fakeSource{}, dashboard.Options{}), "/")
	if code != http.StatusOK || !strings.Contains(body, "No worlds yet") || !strings.Contains(body, "No events yet") {
		t.Fatalf("empty dashboard: got %d\n%s", code, body)
	}
}

// TestDashboardInChromium loads http://binky.localhost:<port>/ through the
// real proxy in headless Chromium, checks the rendered DOM, and saves a
// screenshot to $BINKY_ARTIFACTS (or the test's temp dir).
func TestDashboardInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: apt-get install -y chromium")
		}
		t.Skip("chromium is not installed; apt-get install -y chromium to run this test")
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "proxy", Level: hclog.Warn, Output: io.Discard})
	// The sample links carry the proxy's port, known only once it listens;
	// no request arrives before h is set.
	var h atomic.Pointer[dashboard.Handler]
	p := proxy.New(proxy.Options{Logger: log, Addr: "127.0.0.1:0", FallbackAddr: "none",
		Dashboard: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) })})
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	defer p.Close()
	h.Store(dashboard.New(sample(p.Port()), dashboard.Options{Refresh: -1, Now: func() time.Time { return now }}))
	url := p.URL("binky.localhost") + "/"

	dir := os.Getenv("BINKY_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "dashboard.png")
	_ = os.Remove(shot)
	profile := t.TempDir()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + profile, "--window-size=1280,800"}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := exec.CommandContext(ctx, chromium, append(base, "--dump-dom", url)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	for _, want := range []string{"feat-login-3f2a", "Recent events", "6 of 9 services running"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("DOM rendered by Chromium lacks %q", want)
		}
	}
	out, err := exec.CommandContext(ctx, chromium, append(base, "--screenshot="+shot, url)...).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("screenshot not written: %v\n%s", err, out)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if cfg.Width != 1280 || cfg.Height != 800 {
		t.Errorf("screenshot size: got %dx%d; want 1280x800", cfg.Width, cfg.Height)
	}
	t.Logf("dashboard screenshot: %s", shot)
}
