// Package proxy owns the daemon's one HTTP listener (and, with a certificate
// manager, its one HTTPS listener) that routes <svc>.<wt>.<project>.localhost
// to 127.0.0.1:<port> by the Host header.
//
// The route table is replaced whole by Set (or edited by Upsert and Remove)
// and read lock-free on every request. WebSocket upgrades and streaming
// responses pass through unbuffered; Host is preserved and X-Forwarded-*
// set. Only *.localhost names, the dashboard host and the routed names under
// another apex (a project's apex = "test") are served: any other Host gets
// 421, so a DNS-rebinding page cannot reach a world. An
// unknown .localhost name gets a page listing the live routes; a service that
// is not running, or not answering, gets a page naming it that retries by
// itself. TLS is optional: if it cannot be set up, http keeps working.
//
// The pages the proxy writes itself (the dashboard, the route list, a
// routed service's 503/502 and starting pages) show one home's worlds, so
// they answer only the home's own user (owner.go): the client must be on
// loopback, and Options.Peer (listeners.PeerOf: the client socket's uid in
// /proc/net/tcp{,6} on Linux, the owning process's user on Windows) must
// say it is this process's user; asked once per connection, lazily. Anyone
// else gets a fixed plain answer naming nothing: 403 for the dashboard and
// the route list, a plain 503/502 with the same retry for a routed
// service. Where the platform cannot tell (macOS, the BSDs) a loopback
// client is served. Proxied traffic never asks.
//
// Forwarding has three paths. On the plain-HTTP listener, the front
// (front.go) reads each request head from the connection's buffer before
// net/http does: a bodiless GET, HEAD or OPTIONS over HTTP/1.1 for a running
// world, with nothing unusual in its head, it relays itself on a pooled
// keep-alive backend connection, raw bytes in and out; anything else, and
// any failure before the backend answered, is handed unread to net/http on
// the same connection. A front goroutine that finished a connection waits
// for the next accepted one, so a new connection per request costs no new
// stack and no new buffer. Under net/http, a bodiless GET, HEAD or OPTIONS
// without Upgrade (HTTPS, HTTP/1.0) is answered on a pooled connection by
// the serving goroutine itself (fast.go); everything else goes through
// httputil.ReverseProxy on a shared http.Transport (forward.go). All three
// strip hop-by-hop headers and set the same X-Forwarded-* headers. The
// front's parser says no to what it does not fully understand, and a fuzz
// target checks that whatever it takes net/http reads the same way. On
// Linux the front and the pooled backend connections read and write their
// sockets with raw system calls, parking in the netpoller only when a
// socket is not ready (sockio_linux.go): a nonblocking loopback call never
// blocks, and telling the scheduler it might costs the runtime's monitor
// wake-ups and thread hand-offs on every request.
//
// Browser logs (browser.go): for a route with BrowserLogs, a page
// navigation is taken off the front and the fast path and forwarded by a
// ReverseProxy that puts a small script into an HTML page (never another
// content type, never against the page's CSP), and the proxy answers
// BrowserEndpoint on that hostname itself, for the home's own user and the
// page's own origin only, handing the entries to Options.Browser. Every
// other request takes the paths above unchanged.
package proxy
