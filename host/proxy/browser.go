package proxy

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/browserlog"
)

// Browser logs (a project's [agents] browser_logs, Route.BrowserLogs): the
// proxy puts one small script (browser.js) into the HTML pages of the
// route's service, and the script posts the page's console.error calls,
// uncaught errors, unhandled rejections and failed fetches to
// BrowserEndpoint on the page's own hostname, where the proxy takes them
// and hands them to Options.Browser.
//
// Only a navigation — a GET whose Sec-Fetch-Dest is a document or frame,
// or, without that header, whose Accept names text/html — of a route that
// opts in takes this path (serveInjected): the front hands it to net/http
// (frontNavigation), and it is forwarded without Accept-Encoding, so that
// the page comes plain, and without If-None-Match and If-Modified-Since,
// so that a copy the browser kept from before the script is not kept. Every other request, and every request of a route
// that does not opt in, is forwarded as before, untouched. The response
// is rewritten only when it is text/html, has a body, is not encoded,
// and sets no Content-Security-Policy that would forbid the script
// (cspForbids; a <meta http-equiv> one too); then the script goes right
// after <head> (after its <meta charset>, when that comes first) and
// Content-Length grows by its length. A page left as it is for a reason
// the owner would want to know is said once per route and reason, in the
// daemon's log and as a note in the world's browser log.
//
// The endpoint takes a POST from the home's own user only (owner.go) and
// from the page's own origin only (Origin and Sec-Fetch-Site, when the
// client sends them): another site open in the same browser cannot write
// into the log an agent reads.

// BrowserEndpoint is the path, on a world's own hostname, that its pages
// post browser log entries to.
const BrowserEndpoint = "/__binky/browser-log"

// BrowserSink takes what the pages of a route that opts in report
// (Options.Browser): entries with their Time and Service set, and the
// proxy's own notes (browserlog.KindNote).
type BrowserSink interface {
	BrowserLog(r Route, entries []browserlog.Entry)
}

//go:embed browser.js
var browserScript string

// scriptTag is what goes into a page: one line, so the page's own line
// numbers (in its errors' sources and stacks) stay as they are.
var scriptTag = "<script>" + strings.ReplaceAll(browserScript, "\n", "") + "</script>"

// injectHeadMax is the most of a page read to find where the script goes;
// a page with no <head>, <html> or doctype in it is left as it is.
const injectHeadMax = 64 << 10

// isNavigation reports whether r loads a page the script may go into.
func isNavigation(r *http.Request) bool {
	if r.Method != http.MethodGet || r.Header["Upgrade"] != nil {
		return false
	}
	if d := r.Header.Get("Sec-Fetch-Dest"); d != "" {
		return navigationDest(d)
	}
	for _, v := range r.Header["Accept"] {
		if containsFold(v, "text/html") {
			return true
		}
	}
	return false
}

func navigationDest(d string) bool {
	d = strings.TrimSpace(d)
	return strings.EqualFold(d, "document") || strings.EqualFold(d, "iframe") || strings.EqualFold(d, "frame")
}

// frontBrowser reports whether a request the front parsed, to a route
// with BrowserLogs, is for net/http: a navigation, or any request for
// BrowserEndpoint (answered by the proxy, never forwarded).
func frontBrowser(fr *frontRequest) bool {
	if _, target, ok := bytes.Cut(fr.line, []byte(" ")); ok && bytes.HasPrefix(target, []byte(BrowserEndpoint)) {
		if rest := target[len(BrowserEndpoint):]; len(rest) == 0 || rest[0] == ' ' || rest[0] == '?' {
			return true
		}
	}
	return frontNavigation(fr)
}

// frontNavigation is isNavigation for a request the front parsed.
func frontNavigation(fr *frontRequest) bool {
	if !bytes.HasPrefix(fr.line, []byte("GET ")) {
		return false
	}
	html := false
	for _, l := range fr.lines[:fr.n] {
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("Sec-Fetch-Dest")):
			return navigationDest(string(value))
		case bytes.EqualFold(name, []byte("Accept")):
			html = html || containsFold(string(value), "text/html")
		}
	}
	return html
}

// containsFold reports whether s contains the lower-case ASCII sub,
// ignoring case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// serveBrowserPost answers a post to BrowserEndpoint of route.
func (p *Proxy) serveBrowserPost(w http.ResponseWriter, r *http.Request, route Route) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writePlain(w, http.StatusMethodNotAllowed, "405 method not allowed: a page posts its browser log here\n")
		return
	}
	if !p.ownerOnly(w, r) {
		return
	}
	if !sameOrigin(r) {
		p.log.Debug("refused a browser log post from another origin", "host", r.Host, "origin", r.Header.Get("Origin"))
		writePlain(w, http.StatusForbidden, "403 forbidden: only this hostname's own pages post here\n")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, browserlog.MaxBody))
	if err != nil {
		writePlain(w, http.StatusRequestEntityTooLarge, "413 too large: post at most 64 KiB at once\n")
		return
	}
	entries, _, err := browserlog.Parse(body)
	if err != nil {
		writePlain(w, http.StatusBadRequest, "400 bad request: "+err.Error()+"\n")
		return
	}
	if p.opts.Browser != nil && len(entries) > 0 {
		now := time.Now()
		for i := range entries {
			entries[i].Time, entries[i].Service = now, route.Service
		}
		p.opts.Browser.BrowserLog(route, entries)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// sameOrigin reports whether a post comes from a page of its own
// hostname, as far as the client says: a browser sends Origin (and
// Sec-Fetch-Site) with every post; a client that sends neither is no
// page another site runs.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && !strings.EqualFold(site, "same-origin") {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// serveInjected forwards a navigation of route e through a ReverseProxy
// that asks for the page plain and puts the script into it.
func (p *Proxy) serveInjected(e *entry, w http.ResponseWriter, r *http.Request) {
	target, route := e.forward.pool.target, e.route
	rp := &httputil.ReverseProxy{
		// As newForwarder's, but asking for an encoding the proxy can
		// rewrite.
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = target
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Del("Accept-Encoding")
			// A page the browser kept from before (without the
			// script) must not be revalidated into staying: ask for
			// it whole.
			pr.Out.Header.Del("If-None-Match")
			pr.Out.Header.Del("If-Modified-Since")
		},
		Transport:      p.transport,
		BufferPool:     p.buffers,
		ErrorLog:       p.stdlog,
		ErrorHandler:   p.forwardError,
		ModifyResponse: func(resp *http.Response) error { return p.inject(resp, route) },
	}
	rp.ServeHTTP(w, r)
}

// inject puts the script into resp when it is a page it may go into.
func (p *Proxy) inject(resp *http.Response, route Route) error {
	if !isHTML(resp) {
		return nil
	}
	page := resp.Request.Host + resp.Request.URL.Path
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		p.browserNote(route, "encoding", page, fmt.Sprintf("browser logs: no script in %s's pages: the page came %s-encoded although the proxy asked for it plain", route.Service, enc))
		return nil
	}
	if why := cspForbids(resp.Header.Values("Content-Security-Policy")); why != "" {
		p.browserNote(route, "csp", page, fmt.Sprintf("browser logs: no script in %s's pages that forbid it: the page's Content-Security-Policy %s", route.Service, why))
		return nil
	}
	head, err := readHead(resp.Body, injectHeadMax)
	rest := resp.Body
	if err != nil {
		rest = io.NopCloser(errReader{err})
	}
	at, why := insertAt(head, len(head) < injectHeadMax)
	if why != "" {
		resp.Body = joined{io.MultiReader(bytes.NewReader(head), rest), resp.Body}
		p.browserNote(route, "meta-csp", page, fmt.Sprintf("browser logs: no script in %s's pages that forbid it: the page %s", route.Service, why))
		return nil
	}
	resp.Body = joined{io.MultiReader(bytes.NewReader(head[:at]), strings.NewReader(scriptTag), bytes.NewReader(head[at:]), rest), resp.Body}
	if resp.ContentLength >= 0 {
		resp.ContentLength += int64(len(scriptTag))
		resp.Header.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	// The page is no longer the one the service's validators name.
	resp.Header.Del("Etag")
	resp.Header.Del("Content-Md5")
	return nil
}

// isHTML reports whether resp is an HTML page with a body.
func isHTML(resp *http.Response) bool {
	switch {
	case resp.Request == nil || resp.Request.Method != http.MethodGet:
		return false
	case resp.StatusCode < 200, resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusPartialContent, resp.StatusCode == http.StatusNotModified:
		return false
	case resp.ContentLength == 0:
		return false
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/html")
}

// joined is a body read from one reader and closed through another.
type joined struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// readHead reads body until the end of the page's head (</head> or
// <body) is in what was read, limit bytes, or the end of the body.
func readHead(body io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, 4<<10)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):min(cap(buf), limit)])
		from := max(len(buf)-8, 0)
		buf = buf[:len(buf)+n]
		low := asciiLower(buf[from:])
		if bytes.Contains(low, []byte("</head")) || bytes.Contains(low, []byte("<body")) {
			return buf, nil
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// insertAt is where the script goes in the start of a page: right after
// <head> (after a <meta charset> that comes before any script), else
// after <html>, else after the doctype, else at the start when whole is
// the whole page. why says why it goes nowhere: a <meta http-equiv>
// Content-Security-Policy, or none of those marks in the part read.
func insertAt(head []byte, whole bool) (int, string) {
	low := asciiLower(head)
	end := len(low)
	if i := bytes.Index(low, []byte("</head")); i >= 0 {
		end = i
	} else if i := bytes.Index(low, []byte("<body")); i >= 0 {
		end = i
	}
	if metaCSP(low[:end]) {
		return 0, "sets a Content-Security-Policy in a <meta> tag"
	}
	if at := afterTag(low, "<head"); at >= 0 {
		// A <meta charset> must stay within the first 1024 bytes.
		if m := tagStart(low[at:end], "<meta"); m >= 0 {
			s := tagStart(low[at:end], "<script")
			if tagEnd := bytes.IndexByte(low[at+m:end], '>'); tagEnd >= 0 && (s < 0 || m < s) &&
				bytes.Contains(low[at+m:at+m+tagEnd], []byte("charset")) {
				return at + m + tagEnd + 1, ""
			}
		}
		return at, ""
	}
	if at := afterTag(low, "<html"); at >= 0 {
		return at, ""
	}
	if i := bytes.Index(low, []byte("<!doctype")); i >= 0 {
		if j := bytes.IndexByte(low[i:], '>'); j >= 0 {
			return i + j + 1, ""
		}
	}
	if whole {
		if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
			return 3, ""
		}
		return 0, ""
	}
	return 0, fmt.Sprintf("has no <head>, <html> or doctype in its first %d KiB", injectHeadMax>>10)
}

// asciiLower is b with ASCII letters in lower case, byte for byte (as
// bytes.ToLower is not on invalid UTF-8).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// tagStart is the index of the tag name (as "<head") in low, not a longer
// name ("<header"); -1 when there is none.
func tagStart(low []byte, name string) int {
	off := 0
	for {
		i := bytes.Index(low[off:], []byte(name))
		if i < 0 {
			return -1
		}
		j := off + i + len(name)
		if j == len(low) {
			return -1
		}
		switch low[j] {
		case '>', ' ', '\t', '\n', '\r', '\f', '/':
			return off + i
		}
		off = j
	}
}

// afterTag is the index just after the tag named name (its '>'), or -1.
func afterTag(low []byte, name string) int {
	i := tagStart(low, name)
	if i < 0 {
		return -1
	}
	j := bytes.IndexByte(low[i:], '>')
	if j < 0 {
		return -1
	}
	return i + j + 1
}

// metaCSP reports whether the head holds a <meta http-equiv> that sets a
// Content-Security-Policy.
func metaCSP(low []byte) bool {
	off := 0
	for {
		i := tagStart(low[off:], "<meta")
		if i < 0 {
			return false
		}
		start := off + i
		j := bytes.IndexByte(low[start:], '>')
		if j < 0 {
			j = len(low) - start
		}
		tag := low[start : start+j]
		if k := bytes.Index(tag, []byte("http-equiv")); k >= 0 {
			v := bytes.TrimLeft(tag[k+len("http-equiv"):], " \t\n\r\f")
			if bytes.HasPrefix(v, []byte("=")) {
				v = bytes.TrimLeft(v[1:], " \t\n\r\f\"'")
				if bytes.HasPrefix(v, []byte("content-security-policy")) && !bytes.HasPrefix(v, []byte("content-security-policy-report-only")) {
					return true
				}
			}
		}
		off = start + j
		if off >= len(low) {
			return false
		}
	}
}

// cspForbids says why the Content-Security-Policy header values forbid the
// script: an inline script, or a post to the page's own origin; "" when
// they allow both (or there is none). A policy that names no directive for
// one allows it.
func cspForbids(values []string) string {
	for _, v := range values {
		for policy := range strings.SplitSeq(v, ",") {
			dirs := map[string][]string{}
			for d := range strings.SplitSeq(policy, ";") {
				f := strings.Fields(strings.ToLower(d))
				if len(f) == 0 {
					continue
				}
				if _, seen := dirs[f[0]]; !seen {
					dirs[f[0]] = f[1:]
				}
			}
			if srcs, ok := firstDirective(dirs, "script-src-elem", "script-src", "default-src"); ok && !inlineAllowed(srcs) {
				return "does not allow inline scripts"
			}
			if srcs, ok := firstDirective(dirs, "connect-src", "default-src"); ok && !selfAllowed(srcs) {
				return "does not allow posts to the page's own origin"
			}
		}
	}
	return ""
}

func firstDirective(dirs map[string][]string, names ...string) ([]string, bool) {
	for _, n := range names {
		if srcs, ok := dirs[n]; ok {
			return srcs, true
		}
	}
	return nil, false
}

// inlineAllowed: 'unsafe-inline', which a nonce, a hash or
// 'strict-dynamic' turns off.
func inlineAllowed(srcs []string) bool {
	inline := false
	for _, s := range srcs {
		switch {
		case s == "'unsafe-inline'":
			inline = true
		case s == "'strict-dynamic'", strings.HasPrefix(s, "'nonce-"), strings.HasPrefix(s, "'sha256-"),
			strings.HasPrefix(s, "'sha384-"), strings.HasPrefix(s, "'sha512-"):
			return false
		}
	}
	return inline
}

func selfAllowed(srcs []string) bool {
	for _, s := range srcs {
		switch s {
		case "'self'", "*", "http:", "https:":
			return true
		}
	}
	return false
}

// browserNote says why a page of route was left without the script, once
// per route and reason: in the daemon's log, and as a note in the world's
// browser log.
func (p *Proxy) browserNote(route Route, reason, page, msg string) {
	if _, said := p.browserNotes.LoadOrStore(route.Host+"\x00"+reason, struct{}{}); said {
		return
	}
	p.log.Info(msg, "host", route.Host, "page", page)
	if p.opts.Browser != nil {
		p.opts.Browser.BrowserLog(route, []browserlog.Entry{{Time: time.Now(), Service: route.Service, Kind: browserlog.KindNote, Message: msg, Page: page}})
	}
}
