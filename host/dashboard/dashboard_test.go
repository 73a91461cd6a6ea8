package dashboard_test

import (
	"context"
	"errors"
	"fmt"
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

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/dashboard"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
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
			{Project: "acme", Worktree: "feat-login-3f2a", Branch: "feat/login", Path: "/src/acme/.worktrees/feat-login-3f2a", State: state.WorldUp,
				Verify: &dashboard.Verify{Passed: true, At: now.Add(-3 * time.Minute), Summary: "go test ./... && npm test"},
				Cost: &api.Cost{Source: "processes", Processes: 2, RSS: 64 << 20, CPUPercent: 1.5,
					Disk:   &api.DiskCost{Untracked: 1 << 10, Ignored: 12 << 20, AgeSeconds: 61},
					Slices: []api.SliceCost{{Service: "db", Adapter: "postgres", Bytes: 8 << 20}}, SliceBytes: 8 << 20},
				Services: []dashboard.Service{
					{Name: "web", Kind: "cmd", State: state.ServiceRunning, Port: 4101, URL: url("web.feat-login-3f2a.acme.localhost")},
					{Name: "api", Kind: "cmd", State: state.ServiceRunning, Port: 4102, URL: url("api.feat-login-3f2a.acme.localhost")},
					{Name: "db", Kind: "adapter", Adapter: "postgres", State: state.ServiceProvisioned, Detail: "postgres://acme_feat_login_3f2a_owner:***@127.0.0.1:5432/acme_feat_login_with_a_long_branch_name_3f2a?sslmode=disable&application_name=binky"},
					{Name: "cache", Kind: "adapter", Adapter: "redis", State: state.ServiceProvisioned, Detail: "redis://acme_feat_login_with_a_long_branch_name_3f2a:***@127.0.0.1:6379/0?prefix=acme:feat-login-with-a-long-branch-name-3f2a:"},
				}},
			{Project: "acme", Worktree: "main", Path: "/src/acme", State: state.WorldUp,
				Verify: &dashboard.Verify{Passed: false, At: now.Add(-2 * time.Hour), Summary: "npm test exited 1"},
				Services: []dashboard.Service{
					{Name: "web", Kind: "cmd", State: state.ServiceBackoff, Port: 33000, URL: url("web.main.acme.localhost"), Detail: "exit status 1, retry in 4s",
						LogTail: []string{"booting", "invalid boolean value for key METRICS_COLLECTOR"}},
					{Name: "api", Kind: "cmd", State: state.ServiceRunning, Port: 4002, URL: url("api.main.acme.localhost"), Warning: "port 4002 listens on 0.0.0.0: reachable from other machines"},
					{Name: "db", Kind: "adapter", Adapter: "postgres", State: state.ServiceProvisioned, Detail: "acme_main"},
				}},
			{Project: "shop", Worktree: "fix-cart", Branch: "fix/cart", Path: "/src/shop/.worktrees/fix-cart", State: state.WorldDegraded,
				Reason: "app failed, api unhealthy",
				Services: []dashboard.Service{
					{Name: "app", Kind: "cmd", State: state.ServiceFailed, Port: 4203, URL: url("app.fix-cart.shop.localhost"), Detail: "gave up after 5 restarts", Reason: "failed: exited 1"},
					{Name: "api", Kind: "cmd", State: state.ServiceUnhealthy, Port: 4204, URL: url("api.fix-cart.shop.localhost"), Reason: "unhealthy: http://127.0.0.1:4204/healthz: status 503 for 40s"},
					{Name: "<script>alert(1)</script>", Kind: "cmd", State: state.ServiceStopped},
				}},
		},
		events: []dashboard.Event{
			{Time: now.Add(-20 * time.Second), Event: "service_restart", Project: "acme", Worktree: "main", Service: "web"},
			{Time: now.Add(-3 * time.Minute), Event: "verify_passed", Project: "acme", Worktree: "feat-login-3f2a"},
			{Time: now.Add(-4 * time.Minute), Event: "clone_fallback", Project: "acme", Worktree: "feat-login-3f2a", Service: "db", Adapter: "postgres", Error: "pg_dump: server version mismatch"},
			{Time: now.Add(-9 * time.Minute), Event: "service_failed", Project: "shop", Worktree: "fix-cart", Service: "app", Error: "gave up after 5 restarts"},
			{Time: now.Add(-1 * time.Hour), Event: "up", Project: "shop", Worktree: "fix-cart"},
			{Time: now.Add(-2 * time.Hour), Event: "adapter_stderr", Adapter: "postgres", Error: "resolve: 2026-11-25T12:30:00.000Z [DEBUG] plugin: starting plugin: path=/usr/bin/binky-adapter-postgres"},
			{Time: now.Add(-3 * time.Hour), Event: "adapter_stderr", Adapter: "mysql", Error: "provision: access denied for user root"},
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
		">4101<", `<span class="pill warn">backoff</span>`, `<span class="pill bad">failed</span>`, // ports and states
		`<span class="pill ok">up</span>`, `<span class="pill ok">provisioned</span>`, `<span class="pill bad">degraded</span>`,
		"passed", "3m ago", "npm test exited 1", // verify
		"clone_fallback", "pg_dump: server version mismatch", // events
		"3 worlds", "3 of 7 services running · 3 slices", // slices are not services that run
		">33000<", "invalid boolean value for key METRICS_COLLECTOR\n</pre>", // a crash's last log lines
		"why: app failed, api unhealthy", `<div class="warn-text">port 4002 listens on 0.0.0.0`, "unhealthy: http://127.0.0.1:4204/healthz: status 503 for 40s", "failed: exited 1",
		`<td class="err">provision: access denied`, // a real error is red
		`http-equiv="refresh" content="5"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"memory 64.0 MiB · cpu 1.5% · 2 processes · disk 12.0 MiB (1m1s ago) · slices 8.0 MiB", // cost
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("dashboard contains an unescaped <script>")
	}
	if strings.Contains(body, "[DEBUG] plugin") {
		t.Error("dashboard lists go-plugin's debug lines under Recent events")
	}
	if code, _ := fetch(t, h, "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: got %d; want 404", code)
	}
}

// TestDashboardColoursEveryState: each world and service state of the
// vocabulary gets its colour on the page (an up world and a provisioned
// slice are ok, backoff is a warning), and the header counts running
// commands and provisioned slices as running.
func TestDashboardColoursEveryState(t *testing.T) {
	t.Parallel()
	worlds := map[state.World]string{
		state.WorldUp: "ok", state.WorldStarting: "warn", state.WorldStopping: "warn", state.WorldQueued: "warn",
		state.WorldSuspended: "warn", state.WorldFailed: "bad", state.WorldDegraded: "bad",
		state.WorldDown: "idle", state.WorldRemoving: "idle", state.WorldAbsent: "idle",
	}
	services := map[state.Service]string{
		state.ServiceRunning: "ok", state.ServiceProvisioned: "ok",
		state.ServiceStarting: "warn", state.ServiceBackoff: "warn", state.ServiceStopping: "warn", state.ServiceProvisioning: "warn",
		state.ServiceFailed: "bad", state.ServiceUnhealthy: "bad",
		state.ServiceStopped: "idle", state.ServiceExited: "idle", state.ServiceLost: "idle",
	}
	for _, w := range state.Worlds() {
		class, ok := worlds[w]
		if !ok {
			t.Errorf("world state %q has no colour in this test: decide one", w)
			continue
		}
		src := &fakeSource{worlds: []dashboard.World{{Project: "p", Worktree: "a", State: w}}}
		if _, body := fetch(t, dashboard.New(src, dashboard.Options{}), "/"); !strings.Contains(body, `<span class="pill `+class+`">`+string(w)+`</span>`) {
			t.Errorf("a %s world is not coloured %s", w, class)
		}
	}
	var svcs []dashboard.Service
	up := 0
	for _, s := range state.Services() {
		if _, ok := services[s]; !ok {
			t.Errorf("service state %q has no colour in this test: decide one", s)
		}
		svcs = append(svcs, dashboard.Service{Name: "svc-" + string(s), Kind: "cmd", State: s})
		if s == state.ServiceRunning || s == state.ServiceProvisioned {
			up++
		}
	}
	src := &fakeSource{worlds: []dashboard.World{{Project: "p", Worktree: "a", State: state.WorldUp, Services: svcs}}}
	_, body := fetch(t, dashboard.New(src, dashboard.Options{}), "/")
	for s, class := range services {
		if !strings.Contains(body, `<td><span class="pill `+class+`">`+string(s)+`</span></td>`) {
			t.Errorf("a %s service is not coloured %s", s, class)
		}
	}
	if want := fmt.Sprintf("%d of %d services running", up, len(svcs)); !strings.Contains(body, want) {
		t.Errorf("header lacks %q", want)
	}
}

// TestDashboardShowsSelection: a world up with a profile says so, and
// each service its selection leaves out is marked left out (with why),
// not counted among the services that should run.
func TestDashboardShowsSelection(t *testing.T) {
	t.Parallel()
	src := &fakeSource{worlds: []dashboard.World{{Project: "p", Worktree: "a", State: state.WorldUp, Selection: "profile frontend",
		Services: []dashboard.Service{
			{Name: "web", Kind: "cmd", State: state.ServiceRunning},
			{Name: "worker", Kind: "cmd", State: state.ServiceStopped, LeftOut: "not in profile frontend"},
			{Name: "db", Kind: "adapter", Adapter: "postgres", LeftOut: "not in profile frontend"},
		}}}}
	_, body := fetch(t, dashboard.New(src, dashboard.Options{}), "/")
	for _, want := range []string{
		`services: <code>profile frontend</code>`,
		`<span class="pill idle" title="not in profile frontend">left out</span><div class="detail">not in profile frontend</div>`,
		"1 of 1 service running", // worker and db are left out
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Count(body, ">left out<") != 2 {
		t.Errorf("got %d services marked left out; want 2", strings.Count(body, ">left out<"))
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
	for _, want := range []string{"feat-login-3f2a", "Recent events", "3 of 7 services running"} {
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

// TestDashboardLayoutInChromium renders the page in headless Chromium at
// 1280 and 1920 px wide and checks, in the browser's own layout, that every
// URL and address lies inside its card (none cut off by the card's edge),
// a port number or URL stays on one line (issue 40: "3300 / 0") and no
// table is wider than its card. A script added to the served copy
// of the page (the real page allows no script) records what it measured in
// an attribute that --dump-dom returns.
func TestDashboardLayoutInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: apt-get install -y chromium")
		}
		t.Skip("chromium is not installed; apt-get install -y chromium to run this test")
	}
	_, body := fetch(t, dashboard.New(sample(7355), dashboard.Options{Refresh: -1, Now: func() time.Time { return now }}), "/")
	const measure = `<script>
(function(){
  var bad=[];
  document.querySelectorAll('section.card').forEach(function(card){
    var c=card.getBoundingClientRect();
    card.querySelectorAll('td.url a, td .detail, td .err').forEach(function(el){
      var r=el.getBoundingClientRect();
      if(r.width<=0||r.right>c.right+0.5||r.left<c.left-0.5){bad.push(el.textContent+' ['+Math.round(r.left)+','+Math.round(r.right)+'] outside ['+Math.round(c.left)+','+Math.round(c.right)+']');}
    });
    card.querySelectorAll('td.num, td.url a').forEach(function(el){
      // Lines, not rects: a line cut short with an ellipsis is two
      // fragments on one line.
      var rg=document.createRange();rg.selectNodeContents(el);
      var tops={};Array.prototype.forEach.call(rg.getClientRects(),function(r){if(r.width>0){tops[Math.round(r.top)]=1;}});
      var lines=Object.keys(tops).length;
      if(lines>1){bad.push(el.textContent+' wraps over '+lines+' lines');}
    });
    card.querySelectorAll('table').forEach(function(tb){
      if(tb.scrollWidth>card.clientWidth+1){bad.push('a table '+tb.scrollWidth+'px wide in a card of '+card.clientWidth+'px');}
    });
  });
  var n=document.querySelectorAll('td.url a').length;
  document.body.setAttribute('data-layout', bad.length ? 'BAD '+bad.join(' | ') : 'ok '+n+' links');
})();
</script></body>`
	page := strings.Replace(body, "</body>", measure, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	defer srv.Close()
	for _, width := range []int{1280, 1920} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--hide-scrollbars", "--user-data-dir=" + t.TempDir(), "--window-size=" + strconv.Itoa(width) + ",900",
				"--dump-dom", srv.URL}
			dom, err := exec.CommandContext(ctx, chromium, args...).Output()
			if err != nil {
				t.Fatalf("chromium --dump-dom: %v", err)
			}
			i := strings.Index(string(dom), `data-layout="`)
			if i < 0 {
				t.Fatalf("the measuring script did not run; DOM:\n%s", dom)
			}
			got := string(dom[i+len(`data-layout="`):])
			got = got[:strings.IndexByte(got, '"')]
			if !strings.HasPrefix(got, "ok ") || got == "ok 0 links" {
				t.Fatalf("at %d px: %s", width, got)
			}
			t.Logf("at %d px: %s", width, got)
		})
	}
}

// TestDashboardShowsRemoteWorlds: another host's world reached from here
// has its own section after this machine's, its card marked with the
// host, its links the local ones; the header counts this machine's
// worlds and services only.
func TestDashboardShowsRemoteWorlds(t *testing.T) {
	t.Parallel()
	src := sample(7355)
	src.worlds = append(src.worlds, dashboard.World{Project: "far", Worktree: "feat", Path: "/srv/far", State: state.WorldUp, Host: "box",
		Services: []dashboard.Service{{Name: "web", Kind: "cmd", State: state.ServiceRunning, Port: 41200, URL: "https://web.feat.far.localhost:7443"}}})
	code, body := fetch(t, dashboard.New(src, dashboard.Options{Now: func() time.Time { return now }}), "/")
	if code != http.StatusOK {
		t.Fatalf("status: got %d; want 200", code)
	}
	sec := strings.Index(body, `<h3 id="remote">On other hosts</h3>`)
	if sec < 0 {
		t.Fatalf("no section for other hosts' worlds:\n%s", body)
	}
	if i := strings.Index(body, "fix-cart"); i < 0 || i > sec {
		t.Errorf("this machine's worlds are not before the other hosts' section")
	}
	remote := body[sec:strings.Index(body, "<h3>Recent events</h3>")]
	for _, want := range []string{">on host box</span>", ">feat <small>· far</small>", `href="https://web.feat.far.localhost:7443"`, ">41200<"} {
		if !strings.Contains(remote, want) {
			t.Errorf("the other hosts' section lacks %q:\n%s", want, remote)
		}
	}
	if strings.Count(body, ">on host ") != 1 {
		t.Errorf("a local world is marked with a host")
	}
	if !strings.Contains(body, "3 worlds") || !strings.Contains(body, "3 of 7 services running") {
		t.Errorf("the header counts another host's world as this machine's")
	}
	// With only remote worlds, no "No worlds yet".
	only := &fakeSource{worlds: src.worlds[len(src.worlds)-1:]}
	if _, body := fetch(t, dashboard.New(only, dashboard.Options{}), "/"); strings.Contains(body, "No worlds yet") || !strings.Contains(body, "on host box") {
		t.Errorf("a page with only another host's world:\n%s", body)
	}
}
