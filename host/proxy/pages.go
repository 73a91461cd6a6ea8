package proxy

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
)

// retrySeconds is how often the unavailable page reloads itself.
const retrySeconds = 2

// pageCSS is shared by every page the proxy writes itself.
const pageCSS = `
:root{color-scheme:light dark;--fg:#1d2430;--muted:#5f6b7a;--bg:#f6f7f9;--card:#fff;--line:#e3e6eb;--accent:#2f6fdf;--warn:#b7791f;--bad:#c53030;--ok:#2f855a}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ee;--muted:#9aa5b4;--bg:#14171c;--card:#1c2027;--line:#2c323c;--accent:#7aa7ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:760px;margin:8vh auto;padding:0 20px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:24px 28px}
h1{font-size:20px;margin:0 0 6px}p{margin:6px 0;color:var(--muted)}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
.brand{font-weight:600;color:var(--accent);text-decoration:none;font-size:13px;letter-spacing:.04em;text-transform:uppercase}
table{width:100%;border-collapse:collapse;margin-top:16px}th,td{text-align:left;padding:7px 8px;border-top:1px solid var(--line);font-size:14px}
th{color:var(--muted);font-weight:500;font-size:12px;text-transform:uppercase;letter-spacing:.04em;border-top:0}
a{color:var(--accent)}.state{font-size:12px;padding:1px 8px;border-radius:9px;border:1px solid currentColor}
.running{color:var(--ok)}.starting,.restarting,.reconnecting{color:var(--warn)}.down,.failed{color:var(--bad)}
.spin{display:inline-block;width:10px;height:10px;border:2px solid var(--warn);border-right-color:transparent;border-radius:50%;animation:s 1s linear infinite;margin-right:8px}
@keyframes s{to{transform:rotate(360deg)}}`

var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">{{if .Refresh}}
<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}
<title>{{.Title}}</title><style>` + pageCSS + `</style></head><body><main>
<a class="brand" href="{{.Dashboard}}">Binky</a>{{end}}

{{define "routes"}}{{template "head" .}}
<div class="card"><h1>{{.Title}}</h1>
{{if .Host}}<p>Nothing is routed at <code>{{.Host}}</code>.</p>{{end}}
{{if .Routes}}<table><thead><tr><th>Project</th><th>Worktree</th><th>Service</th><th>URL</th><th>State</th></tr></thead><tbody>
{{range .Routes}}<tr><td>{{.Project}}</td><td>{{.Worktree}}</td><td>{{.Service}}</td><td><a href="{{.URL}}">{{.Host}}</a></td><td><span class="state {{.State}}">{{.State}}</span></td></tr>
{{end}}</tbody></table>{{else}}<p>No world is running. Start one with <code>binky up &lt;branch&gt;</code>.</p>{{end}}
</div></main></body></html>{{end}}

{{define "unavailable"}}{{template "head" .}}
<div class="card"><h1><span class="spin"></span>{{.Route.Service}} is {{.Why}}</h1>
<p><code>{{.Route.Service}}</code> of worktree <code>{{.Route.Worktree}}</code> in project <code>{{.Route.Project}}</code>
({{.Route.Host}}) is not serving right now.</p>
{{if .Route.Remote}}<p>This world runs on host <code>{{.Route.Remote}}</code>; this page tries again every {{.Refresh}} seconds. <code>binky --host {{.Route.Remote}} status</code> says more.</p>
{{else}}<p>This page tries again every {{.Refresh}} seconds. <code>binky status</code> and <code>binky logs {{.Route.Worktree}}</code> say more.</p>{{end}}
</div></main></body></html>{{end}}
`))

// routeView is one row of the route list.
type routeView struct {
	Route
	URL string
}

type pageData struct {
	Title     string
	Dashboard string
	Refresh   int
	Host      string
	Routes    []routeView
	Route     Route
	Why       string
}

// render writes a page, buffered so a template error never leaves half a page.
func (p *Proxy) render(w http.ResponseWriter, status int, name string, d pageData) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		p.log.Error("render proxy page", "page", name, "error", err)
		http.Error(w, http.StatusText(status), status)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// linkURL is the address of host as seen by the client of r (same scheme).
func (p *Proxy) linkURL(r *http.Request, host string) string {
	if r.TLS != nil {
		if u := p.SecureURL(host); u != "" {
			return u
		}
	}
	return p.URL(host)
}

// writeRouteList answers an unknown .localhost name (404) or the dashboard
// host when no dashboard is configured (200).
func (p *Proxy) writeRouteList(w http.ResponseWriter, r *http.Request, status int) {
	routes := p.table.Load().sorted
	d := pageData{Title: "Binky routes", Dashboard: p.linkURL(r, p.dashHost), Routes: make([]routeView, 0, len(routes))}
	if status == http.StatusNotFound {
		d.Title = "No such world here"
		d.Host, _ = normalizeHost(r.Host)
	}
	for _, rt := range routes {
		d.Routes = append(d.Routes, routeView{Route: rt, URL: p.linkURL(r, rt.Host)})
	}
	p.render(w, status, "routes", d)
}

// writeUnavailable answers for a route that is not running or not answering,
// with a page that reloads itself; another user gets it plain (owner.go).
func (p *Proxy) writeUnavailable(w http.ResponseWriter, r *http.Request, rt Route, why string) {
	if !p.isOwner(r) {
		writePlainRetry(w, http.StatusServiceUnavailable, retrySeconds)
		return
	}
	if why == "" {
		why = "unavailable"
	}
	if rt.State == StateReconnecting && rt.Remote != "" {
		why = "reconnecting to " + rt.Remote
	}
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds))
	p.render(w, http.StatusServiceUnavailable, "unavailable", pageData{
		Title: rt.Service + " is " + why, Dashboard: p.linkURL(r, p.dashHost),
		Refresh: retrySeconds, Route: rt, Why: why,
	})
}

// writeBadGateway answers when the backend accepted the connection but the
// exchange failed; it also retries, since a restarting dev server does this.
// Another user gets it plain (owner.go).
func (p *Proxy) writeBadGateway(w http.ResponseWriter, r *http.Request, rt Route) {
	if !p.isOwner(r) {
		writePlainRetry(w, http.StatusBadGateway, retrySeconds)
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds))
	p.render(w, http.StatusBadGateway, "unavailable", pageData{
		Title: rt.Service + " did not answer", Dashboard: p.linkURL(r, p.dashHost),
		Refresh: retrySeconds, Route: rt, Why: "not answering properly",
	})
}

// writeMisdirected refuses a Host the proxy does not serve (421). The body is
// plain text and names nothing of the route table.
func (p *Proxy) writeMisdirected(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusMisdirectedRequest)
	_, _ = w.Write([]byte("421 misdirected request: this Binky proxy serves only *.localhost and the names it routes\n"))
}
