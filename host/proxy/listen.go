package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// fallbackNone disables the fallback address.
const fallbackNone = "none"

// listen binds primary, else fallback, else — when the fallback is a
// loopback address another binky home's proxy may hold — any free port of
// that host, so a second home on the machine still gets a proxy whose URLs
// work. The error names the addresses and what to do; note says why the
// listener is not on primary ("" when it is), naming each address's holder
// through holder (nil: not named).
func listen(primary, fallback string, holder func(addr string) string) (ln net.Listener, note string, err error) {
	held := func(addr string, err error) string {
		if holder != nil {
			if h := holder(addr); h != "" {
				return addr + " is held by " + h
			}
		}
		return addr + ": " + err.Error()
	}
	ln, err = listenTCP(primary)
	if err == nil {
		return ln, "", nil
	}
	if fallback == "" || fallback == fallbackNone || fallback == primary {
		return nil, "", fmt.Errorf("listen on %s: %w (free that port or configure another proxy address)", primary, err)
	}
	why := held(primary, err)
	ln, ferr := listenTCP(fallback)
	if ferr == nil {
		return ln, why, nil
	}
	why += "; " + held(fallback, ferr)
	host, _, serr := net.SplitHostPort(fallback)
	if ip := net.ParseIP(host); serr != nil || ip == nil || !ip.IsLoopback() {
		return nil, "", fmt.Errorf("listen on %s (%v) or fallback %s: %w (free one of those ports or configure another proxy address)", primary, err, fallback, ferr)
	}
	ln, aerr := listenTCP(net.JoinHostPort(host, "0"))
	if aerr != nil {
		return nil, "", fmt.Errorf("listen on %s, fallback %s or any port of %s: %w (free one of those ports or configure another proxy address)", primary, fallback, host, aerr)
	}
	return ln, why, nil
}

// listenTCP binds addr. On a loopback address the connections it accepts
// get no TCP keep-alive: net.Listen's default turns it on and sets its
// timings, four setsockopt calls on every accept (a tenth of the proxy's
// CPU with a new connection per request), to find peers lost across a
// network, which a loopback connection cannot be; a peer that exits is
// seen at once, and idle clients are timed out by the proxy itself.
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	if isLoopbackAddr(addr) {
		lc.KeepAlive = -1
	}
	return lc.Listen(context.Background(), "tcp", addr)
}

// isLoopbackAddr reports whether addr (host:port) names a loopback host.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

func listenerPort(ln net.Listener) int {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(port)
	return n
}

// loopbackV6 also binds [::1] on the same port when ln is on 127.0.0.1, so
// clients that resolve *.localhost to ::1 first connect at once. It is best
// effort: no IPv6, or the port taken there, just means no extra listener.
func loopbackV6(ln net.Listener) []net.Listener {
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		return nil
	}
	v6, err := listenTCP(net.JoinHostPort("::1", strconv.Itoa(a.Port)))
	if err != nil {
		return nil
	}
	return []net.Listener{v6}
}

// startTLS binds the https listener(s) and serves them with certificates
// from the manager. Any failure is logged once and leaves http alone.
// Callers hold p.mu.
func (p *Proxy) startTLS(base context.Context) {
	ln, note, err := listen(p.opts.TLSAddr, p.opts.TLSFallbackAddr, p.opts.Holder)
	if note != "" {
		p.log.Warn("https proxy not on its usual address; https URLs carry its port", "addr", ln.Addr().String(), "why", note)
	}
	if err != nil {
		p.log.Warn("https disabled: http keeps working", "error", err)
		return
	}
	cfg := p.opts.Certs.TLSConfig(p.tlsAllowed)
	p.tlsPort.Store(int32(listenerPort(ln)))
	for _, l := range append([]net.Listener{ln}, loopbackV6(ln)...) {
		p.addSelf(l)
		srv := p.newServer(base)
		srv.TLSConfig = cfg.Clone() // ServeTLS edits its server's config
		p.wg.Add(1)
		go func(l net.Listener) {
			defer p.wg.Done()
			if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				p.log.Warn("https listener stopped; http keeps working", "addr", l.Addr().String(), "error", err)
			}
		}(l)
	}
	p.tlsReady.Store(true)
}

// tlsAllowed is the on-demand issuance policy: routed names and the
// dashboard only.
func (p *Proxy) tlsAllowed(host string) bool {
	return host == p.dashHost || p.Routed(host)
}
