package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/listeners"
)

// sinkRecorder is an Options.Browser that keeps what it is given.
type sinkRecorder struct {
	mu      sync.Mutex
	entries []browserlog.Entry
	routes  []Route
}

func (s *sinkRecorder) BrowserLog(r Route, es []browserlog.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range es {
		s.routes = append(s.routes, r)
	}
	s.entries = append(s.entries, es...)
}

func (s *sinkRecorder) take() []browserlog.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.entries
	s.entries, s.routes = nil, nil
	return out
}

const testPage = "<!doctype html>\n<html><head><title>t</title></head><body><p>hi <header>x</header></p></body></html>\n"

// pageBackend answers each path with a fixed response, and records the
// Accept-Encoding of the last request.
func pageBackend(t *testing.T) (string, func() string) {
	var mu sync.Mutex
	lastAE := ""
	gz := func() []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(testPage))
		w.Close()
		return b.Bytes()
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastAE = r.Header.Get("Accept-Encoding") + r.Header.Get("If-None-Match") + r.Header.Get("If-Modified-Since")
		mu.Unlock()
		h := w.Header()
		h.Set("Etag", `"v1"`)
		body := testPage
		switch r.URL.Path {
		case "/page":
			h.Set("Content-Type", "text/html; charset=utf-8")
		case "/charset":
			h.Set("Content-Type", "text/html")
			body = "<html><HEAD data-x=1>\n<meta charset=\"utf-8\"><title>t</title></head><body></body></html>"
		case "/chunked":
			h.Set("Content-Type", "text/html")
			w.WriteHeader(200)
			io.WriteString(w, "<html><head>")
			w.(http.Flusher).Flush()
			io.WriteString(w, "</head><body>streamed</body></html>")
			return
		case "/json":
			h.Set("Content-Type", "application/json")
			body = `{"html":"<head></head>"}`
		case "/csp":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		case "/csp-inline":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Security-Policy", "script-src 'self' 'unsafe-inline'; connect-src 'self'")
		case "/meta-csp":
			h.Set("Content-Type", "text/html")
			body = `<html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self'"></head><body></body></html>`
		case "/gzip":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", strconv.Itoa(len(gz)))
			w.Write(gz)
			return
		case "/missing":
			h.Set("Content-Type", "text/html")
			w.WriteHeader(404)
			io.WriteString(w, testPage)
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), func() string { mu.Lock(); defer mu.Unlock(); return lastAE }
}

// TestBrowserScriptGoesOnlyIntoPages: a navigation of a route with
// BrowserLogs gets the script in an HTML page, after <head> (and its
// <meta charset>), with Content-Length to match; anything else — JSON, a
// fetch of HTML, a page whose CSP forbids it, an encoded page, a HEAD, a
// route without BrowserLogs — comes byte for byte as the backend sent it.
func TestBrowserScriptGoesOnlyIntoPages(t *testing.T) {
	t.Parallel()
	target, lastAE := pageBackend(t)
	sink := &sinkRecorder{}
	p := startProxy(t, Options{Browser: sink})
	p.Set([]Route{
		{Host: "web.main.acme.localhost", Target: target, State: StateRunning, Project: "acme", Worktree: "main", Service: "web", BrowserLogs: true},
		{Host: "web.off.acme.localhost", Target: target, State: StateRunning, Project: "acme", Worktree: "off", Service: "web"},
	})
	const nav = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	cases := []struct {
		name, host, method, path, accept, dest string
		injected                               bool
		after                                  string // the script comes right after this
	}{
		{"page", "web.main.acme.localhost", "GET", "/page", nav, "", true, "<html><head>"},
		{"page by Sec-Fetch-Dest", "web.main.acme.localhost", "GET", "/page", "*/*", "document", true, "<html><head>"},
		{"after meta charset", "web.main.acme.localhost", "GET", "/charset", nav, "", true, `<meta charset="utf-8">`},
		{"streamed page", "web.main.acme.localhost", "GET", "/chunked", nav, "", true, "<html><head>"},
		{"error page", "web.main.acme.localhost", "GET", "/missing", nav, "", true, "<html><head>"},
		{"CSP allowing inline", "web.main.acme.localhost", "GET", "/csp-inline", nav, "", true, "<html><head>"},
		{"json", "web.main.acme.localhost", "GET", "/json", nav, "", false, ""},
		{"fetch of a page", "web.main.acme.localhost", "GET", "/page", "*/*", "empty", false, ""},
		{"no Accept", "web.main.acme.localhost", "GET", "/page", "", "", false, ""},
		{"HEAD", "web.main.acme.localhost", "HEAD", "/page", nav, "", false, ""},
		{"CSP header", "web.main.acme.localhost", "GET", "/csp", nav, "", false, ""},
		{"CSP meta", "web.main.acme.localhost", "GET", "/meta-csp", nav, "", false, ""},
		{"gzip", "web.main.acme.localhost", "GET", "/gzip", nav, "", false, ""},
		{"route not opted in", "web.off.acme.localhost", "GET", "/page", nav, "", false, ""},
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
	direct := func(method, path string) ([]byte, http.Header) {
		req, _ := http.NewRequest(method, "http://"+target+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b, resp.Header
	}
	for _, c := range cases {
		for _, keepAlive := range []bool{true, false} { // the front's path and net/http's
			req, _ := http.NewRequest(c.method, "http://"+p.testAddr()+c.path, nil)
			req.Host = c.host
			req.Close = !keepAlive
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			if c.dest != "" {
				req.Header.Set("Sec-Fetch-Dest", c.dest)
			}
			req.Header.Set("Accept-Encoding", "gzip, br")
			req.Header.Set("If-None-Match", `"v0"`)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: read: %v", c.name, err)
			}
			want, wantHeader := direct(c.method, c.path)
			if !c.injected {
				if !bytes.Equal(got, want) {
					t.Errorf("%s: body changed:\n%q\nwant\n%q", c.name, got, want)
				}
				if resp.Header.Get("Content-Length") != wantHeader.Get("Content-Length") {
					t.Errorf("%s: Content-Length %q; want the backend's %q", c.name, resp.Header.Get("Content-Length"), wantHeader.Get("Content-Length"))
				}
				continue
			}
			if ae := lastAE(); ae != "" {
				t.Errorf("%s: the backend was asked for Accept-Encoding %q or a revalidation; want neither", c.name, ae)
			}
			if et := resp.Header.Get("Etag"); et != "" {
				t.Errorf("%s: the changed page kept the service's ETag %q", c.name, et)
			}
			if !bytes.Contains(got, []byte(c.after+scriptTag)) {
				t.Errorf("%s: no script right after %q:\n%.300q", c.name, c.after, got)
			}
			if !bytes.Equal(bytes.Replace(got, []byte(scriptTag), nil, 1), want) {
				t.Errorf("%s: page without the script differs from the backend's:\n%q\nwant\n%q", c.name, got, want)
			}
			if cl := resp.Header.Get("Content-Length"); wantHeader.Get("Content-Length") != "" && cl != strconv.Itoa(len(got)) {
				t.Errorf("%s: Content-Length %q; want %d", c.name, cl, len(got))
			}
		}
	}
	// The pages left alone for a reason are said once each, by route.
	var notes []string
	for _, e := range sink.take() {
		if e.Kind != browserlog.KindNote || e.Service != "web" {
			t.Errorf("sink got %+v; want only notes of web", e)
		}
		notes = append(notes, e.Message)
	}
	if len(notes) != 3 || !strings.Contains(strings.Join(notes, "\n"), "Content-Security-Policy does not allow inline scripts") ||
		!strings.Contains(strings.Join(notes, "\n"), "gzip-encoded") || !strings.Contains(strings.Join(notes, "\n"), "in a <meta> tag") {
		t.Errorf("notes:\n%s\nwant one each for the CSP header, the meta CSP and gzip", strings.Join(notes, "\n"))
	}
}

// TestBrowserPost: the endpoint takes a page's entries from its own
// origin and the home's user, and refuses anything else without telling
// the sink.
func TestBrowserPost(t *testing.T) {
	t.Parallel()
	backend, _ := startBackend(t, "web")
	for _, who := range []struct {
		name  string
		peer  listeners.Peer
		owner bool
	}{
		{"owner", listeners.Peer{Mine: true}, true},
		{"another user", listeners.Peer{User: "uid 1001"}, false},
	} {
		t.Run(who.name, func(t *testing.T) {
			t.Parallel()
			sink := &sinkRecorder{}
			fp := &fakePeer{peer: who.peer}
			p := startProxy(t, Options{Browser: sink, Peer: fp.fn})
			p.Set([]Route{
				{Host: "web.main.acme.localhost", Target: backend, State: StateRunning, Project: "acme", Worktree: "main", Service: "web", BrowserLogs: true},
				{Host: "web.down.acme.localhost", Target: backend, State: StateDown, Project: "acme", Worktree: "down", Service: "web", BrowserLogs: true},
				{Host: "web.off.acme.localhost", Target: backend, State: StateRunning, Project: "acme", Worktree: "off", Service: "web"},
			})
			post := func(host, method, origin, site, body string) (int, string) {
				req, _ := http.NewRequest(method, "http://"+p.testAddr()+BrowserEndpoint, strings.NewReader(body))
				req.Host = host
				if origin != "" {
					req.Header.Set("Origin", origin)
				}
				if site != "" {
					req.Header.Set("Sec-Fetch-Site", site)
				}
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			entries := `[{"kind":"console","message":"boom","url":"http://web.main.acme.localhost/"},{"kind":"fetch","message":"500 /api","status":500}]`
			code, body := post("web.main.acme.localhost", "POST", "http://web.main.acme.localhost", "same-origin", entries)
			if !who.owner {
				if code != 403 || body != refusalBody {
					t.Errorf("post as another user: %d %q; want 403 %q", code, body, refusalBody)
				}
				if got := sink.take(); len(got) != 0 {
					t.Errorf("another user's post reached the sink: %+v", got)
				}
				return
			}
			if code != 204 {
				t.Fatalf("post: %d %q; want 204", code, body)
			}
			got := sink.take()
			if len(got) != 2 || got[0].Service != "web" || got[0].Message != "boom" || got[0].Time.IsZero() || got[1].Status != 500 {
				t.Errorf("sink got %+v", got)
			}
			// A world that is down still takes its page's last words.
			if code, _ := post("web.down.acme.localhost", "POST", "", "", entries); code != 204 || len(sink.take()) != 2 {
				t.Errorf("post to a route not running: %d; want 204, recorded", code)
			}
			for _, bad := range []struct {
				name, method, origin, site, body string
				code                             int
			}{
				{"another site", "POST", "http://evil.localhost", "cross-site", entries, 403},
				{"another origin, no Sec-Fetch-Site", "POST", "http://api.main.acme.localhost", "", entries, 403},
				{"opaque origin", "POST", "null", "", entries, 403},
				{"GET", "GET", "", "", "", 405},
				{"HEAD", "HEAD", "", "", "", 405},
				{"not entries", "POST", "", "", `{"kind":"console"}`, 400},
			} {
				if code, body := post("web.main.acme.localhost", bad.method, bad.origin, bad.site, bad.body); code != bad.code {
					t.Errorf("%s: %d %q; want %d", bad.name, code, body, bad.code)
				}
			}
			if got := sink.take(); len(got) != 0 {
				t.Errorf("refused posts reached the sink: %+v", got)
			}
			// A route that does not opt in forwards the path to its backend.
			if code, body := post("web.off.acme.localhost", "POST", "", "", entries); code != 200 || !strings.Contains(body, `"name":"web"`) {
				t.Errorf("post to a route without browser logs: %d %q; want the backend's answer", code, body)
			}
		})
	}
}

func TestCSPForbids(t *testing.T) {
	for _, c := range []struct {
		policy string
		forbid bool
	}{
		{"", false},
		{"frame-ancestors 'none'", false},
		{"default-src 'self'", true},
		{"default-src 'self' 'unsafe-inline'", false},
		{"script-src 'unsafe-inline'; connect-src 'none'", true},
		{"script-src 'unsafe-inline' 'nonce-abc'", true},
		{"script-src 'unsafe-inline' 'strict-dynamic'", true},
		{"script-src 'unsafe-inline' 'sha256-xyz'", true},
		{"script-src 'self'; script-src 'unsafe-inline'", true}, // the first one counts
		{"script-src-elem 'unsafe-inline'; script-src 'none'", false},
		{"SCRIPT-SRC 'UNSAFE-INLINE'", false},
		{"img-src *, script-src 'none'", true}, // two policies: both apply
		{"script-src;", true},
	} {
		var vals []string
		if c.policy != "" {
			vals = []string{c.policy}
		}
		if got := cspForbids(vals) != ""; got != c.forbid {
			t.Errorf("cspForbids(%q) = %v; want %v", c.policy, got, c.forbid)
		}
	}
}

func TestIsNavigation(t *testing.T) {
	for _, c := range []struct {
		method, accept, dest string
		want                 bool
	}{
		{"GET", "text/html,*/*", "", true},
		{"GET", "TEXT/HTML", "", true},
		{"GET", "*/*", "", false},
		{"GET", "*/*", "document", true},
		{"GET", "*/*", "iframe", true},
		{"GET", "text/html", "empty", false},
		{"POST", "text/html", "document", false},
		{"HEAD", "text/html", "", false},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		head := c.method + " / HTTP/1.1\r\nHost: a.localhost\r\n"
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
			head += "Accept: " + c.accept + "\r\n"
		}
		if c.dest != "" {
			r.Header.Set("Sec-Fetch-Dest", c.dest)
			head += "sec-fetch-dest: " + c.dest + "\r\n"
		}
		if got := isNavigation(r); got != c.want {
			t.Errorf("isNavigation(%s Accept %q Sec-Fetch-Dest %q) = %v; want %v", c.method, c.accept, c.dest, got, c.want)
		}
		var fr frontRequest
		if parseFront([]byte(head+"\r\n"), &fr) {
			if got := frontNavigation(&fr); got != c.want {
				t.Errorf("frontNavigation(%q) = %v; want %v", head, got, c.want)
			}
		}
	}
}

func TestFrontLeavesTheEndpointToNetHTTP(t *testing.T) {
	for head, want := range map[string]bool{
		"GET /__binky/browser-log HTTP/1.1\r\nHost: a.localhost\r\n\r\n":      true,
		"HEAD /__binky/browser-log?x=1 HTTP/1.1\r\nHost: a.localhost\r\n\r\n": true,
		"GET /__binky/browser-logs HTTP/1.1\r\nHost: a.localhost\r\n\r\n":     false,
		"GET /app HTTP/1.1\r\nHost: a.localhost\r\n\r\n":                      false,
	} {
		var fr frontRequest
		if !parseFront([]byte(head), &fr) {
			t.Fatalf("parseFront(%q) refused it", head)
		}
		if got := frontBrowser(&fr); got != want {
			t.Errorf("frontBrowser(%q) = %v; want %v", head, got, want)
		}
	}
}
