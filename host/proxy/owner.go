package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	"github.com/binkyhq/binky/host/listeners"
)

// The pages the proxy writes itself show one home's worlds: the dashboard,
// the route list (the dashboard host without a dashboard, and the 404 of an
// unknown name), and the pages of a routed service that is not serving
// (starting, down, not answering), which name its project, worktree, state
// and backend port. They are shown only to the home's own user: the user
// at the client end of the connection, found by Options.Peer, must be this
// process's. Anyone else gets a fixed answer that names nothing the client
// did not send: refusalBody (403) instead of the dashboard and the route
// list, and a plain 503 or 502 instead of a routed service's page, so that
// another user's client of a world that is restarting still sees a status
// it retries on.
//
// Proxied traffic never asks: the front (front.go) and the forwarding paths
// (fast.go, forward.go) do not call Peer, and a page that does asks once
// per connection. A post to a world's browser log endpoint (browser.go)
// asks as a page does.

// refusalBody is what a user other than the home's gets instead of the
// dashboard or the route list, with status 403.
const refusalBody = "403 forbidden: this page is shown only to the user who runs this Binky\n"

// The plain pages another user gets for a routed service that is not
// serving.
const (
	plainUnavailableBody = "503 service unavailable: nothing is serving at this name right now\n"
	plainBadGatewayBody  = "502 bad gateway: the service at this name did not answer properly\n"
)

// peerKey is the context key of a connection's *peerCheck.
type peerKey struct{}

// peerCheck is who is at the client end of one connection, asked of
// Options.Peer once, when the first page that needs it is written. The
// answer cannot change: a connection's sockets and their owners are fixed.
type peerCheck struct {
	client, server netip.AddrPort
	once           sync.Once
	peer           listeners.Peer
	err            error
}

// connContext gives every connection net/http serves (the front's
// hand-offs and TLS included) its peerCheck, unasked.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerKey{}, &peerCheck{client: addrPortOf(c.RemoteAddr()), server: addrPortOf(c.LocalAddr())})
}

// addrPortOf is a TCP address as a netip.AddrPort; the zero value for
// anything else.
func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	if a == nil {
		return netip.AddrPort{}
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// isOwner reports whether r comes from the home's own user. A client that
// is not on loopback, or that Options.Peer cannot identify, is not; where
// the platform cannot tell at all (errors.ErrUnsupported: macOS, the BSDs)
// a loopback client is served, as before.
func (p *Proxy) isOwner(r *http.Request) bool {
	pc, _ := r.Context().Value(peerKey{}).(*peerCheck)
	if pc == nil {
		// A request that did not come through newServer's ConnContext.
		pc = &peerCheck{}
		pc.client, _ = netip.ParseAddrPort(r.RemoteAddr)
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			pc.server = addrPortOf(la)
		}
	}
	if !pc.client.Addr().Unmap().IsLoopback() {
		p.log.Debug("refused a page to a client not on loopback", "host", r.Host, "client", pc.client)
		return false
	}
	pc.once.Do(func() { pc.peer, pc.err = p.opts.Peer(pc.client, pc.server) })
	switch {
	case pc.err == nil && pc.peer.Mine:
		return true
	case pc.err == nil:
		p.log.Debug("refused a page to another user", "host", r.Host, "client", pc.client, "user", pc.peer.User)
		return false
	case errors.Is(pc.err, errors.ErrUnsupported):
		return true
	}
	p.log.Debug("refused a page to a client that cannot be identified", "host", r.Host, "client", pc.client, "error", pc.err)
	return false
}

// ownerOnly answers r with the refusal unless it comes from the home's own
// user; it reports whether the caller may write its page.
func (p *Proxy) ownerOnly(w http.ResponseWriter, r *http.Request) bool {
	if p.isOwner(r) {
		return true
	}
	writePlain(w, http.StatusForbidden, refusalBody)
	return false
}

// writePlainRetry is a routed service's page for another user: the status
// the owner would get, a fixed text, and the same retry (Retry-After, and
// Refresh so a browser tab reloads as it would on the owner's page).
func writePlainRetry(w http.ResponseWriter, status, retry int) {
	body := plainUnavailableBody
	if status == http.StatusBadGateway {
		body = plainBadGatewayBody
	}
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	w.Header().Set("Refresh", strconv.Itoa(retry))
	writePlain(w, status, body)
}

// writePlain writes a fixed plain-text answer.
func writePlain(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
