package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// forwarder sends requests for one route to its backend.
type forwarder struct {
	rp   *httputil.ReverseProxy
	pool *connPool // the fast path's idle connections (fast.go)
}

// serve forwards r: on the fast path when it qualifies, else through the
// ReverseProxy.
func (f *forwarder) serve(p *Proxy, w http.ResponseWriter, r *http.Request) {
	if fastEligible(r) {
		p.serveFast(f, w, r)
		return
	}
	f.rp.ServeHTTP(w, r)
}

// newTransport is the one client transport all routes share: keep-alive
// connections to local backends, many idle ones per backend, no proxy from
// the environment, bodies passed as they are.
func newTransport(d *net.Dialer) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		MaxIdleConns:          0, // no overall limit
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		ReadBufferSize:        32 << 10,
		WriteBufferSize:       32 << 10,
	}
}

// newForwarder builds the reverse proxy for target (host:port).
func (p *Proxy) newForwarder(target string) *forwarder {
	return &forwarder{pool: &connPool{target: target}, rp: &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = target
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport: p.transport,
		// Zero, not -1: httputil already flushes every write of a response
		// that streams (text/event-stream, or no Content-Length: chunked,
		// long polls), while -1 would also flush the headers of every
		// fixed-length response in a separate write.
		FlushInterval: 0,
		BufferPool:    p.buffers,
		ErrorLog:      p.stdlog,
		ErrorHandler:  p.forwardError,
	}}
}

// forwardError answers a request the backend could not serve: a refused or
// failed connection becomes the retrying "unavailable" page (the service is
// probably restarting); anything else a plain 502 page naming the service.
func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
		// The client went away; there is no one to answer.
		return
	}
	e := p.lookup(r)
	if e == nil {
		http.Error(w, "route removed", http.StatusBadGateway)
		return
	}
	if errors.Is(err, errSelfTarget) {
		p.log.Warn("route refused: its target is the proxy's own address", "host", e.route.Host, "target", e.route.Target)
		p.writeUnavailable(w, r, e.route, "its target "+e.route.Target+" is Binky's proxy itself (the request would loop)")
		return
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		p.log.Debug("backend not accepting connections", "host", e.route.Host, "target", e.route.Target, "error", err)
		p.writeUnavailable(w, r, e.route, "not answering on "+e.route.Target)
		return
	}
	p.log.Debug("forward to backend failed", "host", e.route.Host, "target", e.route.Target, "error", err)
	p.writeBadGateway(w, r, e.route)
}

// lookup finds the entry for a request's Host, or nil.
func (p *Proxy) lookup(r *http.Request) *entry {
	h, ok := normalizeHost(r.Host)
	if !ok {
		return nil
	}
	return p.table.Load().hosts[h]
}

// bufferPool recycles the copy buffers of streamed bodies.
type bufferPool struct{ pool sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
}

func (b *bufferPool) Get() []byte  { return *(b.pool.Get().(*[]byte)) }
func (b *bufferPool) Put(p []byte) { b.pool.Put(&p) }

var _ httputil.BufferPool = (*bufferPool)(nil)
