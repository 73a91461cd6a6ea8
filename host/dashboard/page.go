package dashboard

import (
	"html/template"

	"github.com/binkyhq/binky/host/state"
)

// worldClass maps a world's state onto one of four colours.
func worldClass(w state.World) string {
	switch w {
	case state.WorldUp:
		return "ok"
	case state.WorldStarting, state.WorldStopping, state.WorldQueued, state.WorldSuspended:
		return "warn"
	case state.WorldFailed, state.WorldDegraded:
		return "bad"
	}
	return "idle" // down, removing, absent
}

// serviceClass maps a service's state onto one of four colours.
func serviceClass(s state.Service) string {
	switch {
	case serviceUp(s):
		return "ok"
	case s == state.ServiceStarting, s == state.ServiceBackoff, s == state.ServiceStopping, s == state.ServiceProvisioning:
		return "warn"
	case s == state.ServiceFailed, s == state.ServiceUnhealthy:
		return "bad"
	}
	return "idle" // stopped, exited, lost
}

// serviceUp reports whether a service is as it should be: a command
// running, a slice provisioned. The header counts these as running.
func serviceUp(s state.Service) bool {
	return s == state.ServiceRunning || s == state.ServiceProvisioned
}

const css = `
:root{color-scheme:light dark;--fg:#1b2230;--muted:#667085;--bg:#f4f6f9;--card:#fff;--line:#e4e7ec;--head:#f9fafb;
--accent:#2f6fdf;--ok:#1f8a4c;--okbg:#e7f6ee;--warn:#b26b00;--warnbg:#fff4de;--bad:#c8322f;--badbg:#fdeceb;--idle:#667085;--idlebg:#eef0f3}
@media (prefers-color-scheme:dark){:root{--fg:#e5e8ee;--muted:#98a2b3;--bg:#12151b;--card:#1b1f27;--line:#2b313c;--head:#20252e;
--accent:#7aa7ff;--okbg:#163324;--ok:#5fd08f;--warnbg:#3a2c10;--warn:#f0b54a;--badbg:#3d1a1a;--bad:#ff7b72;--idlebg:#262b34}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{display:flex;align-items:baseline;gap:18px;padding:18px 32px;border-bottom:1px solid var(--line);background:var(--card)}
header h1{margin:0;font-size:19px;letter-spacing:-.01em}header h1 span{color:var(--accent)}
header .sum{color:var(--muted)}header .clock{margin-left:auto;color:var(--muted);font-size:12px}
main{padding:24px 32px;max-width:1280px;margin:0 auto}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;overflow:hidden}
.card .top{display:flex;align-items:center;gap:10px;padding:14px 18px 10px}
.card h2{margin:0;font-size:16px;font-weight:600}.card h2 small{color:var(--muted);font-weight:400}
.meta{padding:0 18px 12px;color:var(--muted);font-size:12px;display:flex;gap:14px;flex-wrap:wrap}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{width:100%;border-collapse:collapse;table-layout:fixed}
table.svc th:nth-child(2){width:104px}table.svc th:nth-child(3){width:84px}
table.svc td{overflow-wrap:anywhere}
table.svc td.num{white-space:nowrap;overflow-wrap:normal}
td.url a{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
pre.tail{margin:6px 0 0;padding:6px 8px;background:var(--head);border-radius:6px;font:11px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere;color:var(--muted)}
.why{padding:0 18px 12px;font-size:12px}
th{background:var(--head);color:var(--muted);font-weight:500;font-size:11px;text-transform:uppercase;letter-spacing:.05em;text-align:left;padding:7px 18px}
td{padding:8px 18px;border-top:1px solid var(--line);vertical-align:top}
td.num{font-variant-numeric:tabular-nums}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.pill{display:inline-block;font-size:11px;font-weight:600;padding:1px 9px;border-radius:10px;white-space:nowrap}
.ok{color:var(--ok);background:var(--okbg)}.warn{color:var(--warn);background:var(--warnbg)}
.bad{color:var(--bad);background:var(--badbg)}.idle{color:var(--idle);background:var(--idlebg)}
.host{color:var(--accent);background:var(--head);border:1px solid var(--line)}
.verify{margin-left:auto;font-size:12px;color:var(--muted)}
.detail{color:var(--muted);font-size:12px}.err{color:var(--bad)}.warn-text{color:var(--warn);font-size:12px}
.banner{background:var(--badbg);color:var(--bad);border:1px solid var(--bad);border-radius:8px;padding:10px 14px;margin-bottom:18px}
.empty{background:var(--card);border:1px dashed var(--line);border-radius:10px;padding:28px;text-align:center;color:var(--muted)}
h3{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:30px 0 10px}
.events td{font-size:13px;overflow-wrap:anywhere}.events .when{color:var(--muted);white-space:nowrap}
.events th:nth-child(1){width:96px}.events th:nth-child(2){width:150px}
`

var page = template.Must(template.New("dashboard").Funcs(template.FuncMap{"worldClass": worldClass, "serviceClass": serviceClass}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}
<title>Binky — {{len .Worlds}} worlds</title><style>` + css + `</style></head>
<body>
<header><h1><span>Binky</span> worlds</h1>
<div class="sum">{{len .Worlds}} world{{if ne (len .Worlds) 1}}s{{end}} · {{.Running}} of {{.Services}} service{{if ne .Services 1}}s{{end}} running{{if .Slices}} · {{.Slices}} slice{{if ne .Slices 1}}s{{end}}{{if .SlicesNotReady}} ({{.SlicesNotReady}} not provisioned){{end}}{{end}}</div>
<div class="clock">updated {{.Now.Format "15:04:05"}}</div></header>
<main>
{{if .Error}}<div class="banner">{{.Error}}</div>{{end}}
{{if .Worlds}}<div class="grid">
{{range .Worlds}}{{template "card" .}}{{end}}</div>
{{else if not .Remote}}<div class="empty">No worlds yet. Start one with <code>binky up &lt;branch&gt;</code> in a repository with a <code>binky.toml</code>.</div>{{end}}
{{if .Remote}}
<h3 id="remote">On other hosts</h3>
<div class="grid remote">
{{range .Remote}}{{template "card" .}}{{end}}</div>{{end}}

<h3>Recent events</h3>
{{if .Events}}<div class="card"><table class="events"><thead><tr><th>When</th><th>Event</th><th>World</th><th>Service</th><th>Message</th></tr></thead><tbody>
{{range .Events}}<tr><td class="when" title="{{.Stamp}}">{{.Ago}}</td><td><code>{{.Name}}</code></td>
<td>{{.Worktree}}{{if .Project}} <span class="detail">· {{.Project}}</span>{{end}}</td>
<td>{{.Service}}{{if .Adapter}} <span class="detail">{{.Adapter}}</span>{{end}}</td>
<td class="{{.Class}}">{{.Error}}</td></tr>
{{end}}</tbody></table></div>{{else}}<div class="empty">No events yet.</div>{{end}}
</main></body></html>
{{define "card"}}<section class="card">
<div class="top"><h2>{{.Worktree}} <small>· {{.Project}}</small></h2>{{if .Host}}
<span class="pill host" title="runs on host {{.Host}}; binky --host {{.Host}} status says more">on host {{.Host}}</span>{{end}}
<span class="pill {{worldClass .State}}">{{.State}}</span>
{{$ago := .VerifyAgo}}<span class="verify">{{with .Verify}}verify <span class="pill {{if .Passed}}ok{{else}}bad{{end}}">{{if .Passed}}passed{{else}}failed{{end}}</span> {{$ago}}{{else}}not verified yet{{end}}</span>
</div>
<div class="meta">{{if .Branch}}<span>branch <code>{{.Branch}}</code></span>{{end}}{{if .Selection}}<span class="selection">services: <code>{{.Selection}}</code></span>{{end}}{{if .Path}}<span><code>{{.Path}}</code></span>{{end}}
{{with .Verify}}{{if .Summary}}<span class="{{if not .Passed}}err{{end}}">{{.Summary}}</span>{{end}}{{end}}</div>
{{if .CostLine}}<div class="meta cost">{{.CostLine}}</div>{{end}}
{{if .Reason}}<div class="why err">why: {{.Reason}}</div>{{end}}
{{if .Services}}<table class="svc"><thead><tr><th>Service</th><th>State</th><th>Port</th><th>URL</th></tr></thead><tbody>
{{range .Services}}<tr><td><strong>{{.Name}}</strong>{{if .Adapter}} <span class="detail">{{.Adapter}}</span>{{end}}{{if .Detail}}<div class="detail" title="{{.Detail}}">{{.Detail}}</div>{{end}}{{if .Reason}}<div class="err">{{.Reason}}</div>{{end}}{{if .Warning}}<div class="warn-text">{{.Warning}}</div>{{end}}{{if .LogTail}}<pre class="tail" title="last log lines">{{range .LogTail}}{{.}}
{{end}}</pre>{{end}}</td>
<td>{{if .LeftOut}}<span class="pill idle" title="{{.LeftOut}}">left out</span><div class="detail">{{.LeftOut}}</div>{{else}}<span class="pill {{serviceClass .State}}">{{.State}}</span>{{end}}</td>
<td class="num">{{if .Port}}{{.Port}}{{else}}—{{end}}</td>
<td class="url">{{if .URL}}<a href="{{.URL}}" title="{{.URL}}">{{.LinkText}}</a>{{else}}<span class="detail">—</span>{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<div class="meta">no services</div>{{end}}
</section>
{{end}}`))
