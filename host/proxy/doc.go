// Package proxy owns the daemon's one HTTP listener (and, with a certificate
// manager, its one HTTPS listener) that routes <svc>.<wt>.<project>.localhost
// to 127.0.0.1:<port> by the Host header.
//
// The route table is replaced whole by Set (or edited by Upsert and Remove)
// and read lock-free on every request. WebSocket upgrades and streaming
// responses pass through unbuffered; Host is preserved and X-Forwarded-*
// set. Only routed *.localhost names and the dashboard host are served: any
// other Host gets 421, so a DNS-rebinding page cannot reach a world. An
// unknown .localhost name gets a page listing the live routes; a service that
// is not running, or not answering, gets a page naming it that retries by
// itself. TLS is optional: if it cannot be set up, http keeps working.
//
// Forwarding has two paths. A bodiless GET, HEAD or OPTIONS without Upgrade
// (most of what a browser or a load test sends) is written and answered on a
// pooled keep-alive backend connection by the serving goroutine itself
// (fast.go); everything else goes through httputil.ReverseProxy on a shared
// http.Transport (forward.go). Both strip hop-by-hop headers and set the
// same X-Forwarded-* headers.
package proxy
