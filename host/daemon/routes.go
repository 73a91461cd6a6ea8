package daemon

import (
	"context"
	"path/filepath"

	"github.com/binkyhq/binky/host/certs"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/proxy"
)

// startProxy starts the embedded reverse proxy. A proxy that cannot bind is
// logged and left off: URLs then fall back to ports, and up still works.
func (d *Daemon) startProxy(ctx context.Context) {
	if d.opts.ProxyAddr == "off" {
		return
	}
	// TLS is optional: a CA that cannot be made is logged once, and http
	// keeps working.
	cm, err := certs.New(certs.Options{Dir: filepath.Join(d.home, "certs"), Logger: d.log.Named("certs")})
	if err != nil {
		d.log.Warn("https disabled: local CA unavailable", "error", err)
		cm = nil
	}
	p := proxy.New(proxy.Options{
		Logger:    d.log.Named("proxy"),
		Addr:      d.opts.ProxyAddr,
		TLSAddr:   d.opts.ProxyTLSAddr,
		Certs:     cm,
		Dashboard: d.dashboardHandler(),
		Waker:     d.w.Waker(),
		Browser:   d.w.BrowserLogs(),
		Holder:    ports.AddrHolder,
	})
	if err := p.Start(ctx); err != nil {
		d.log.Warn("proxy not started; services stay reachable on their ports", "error", err)
		return
	}
	d.proxy = p
	d.refreshRoutes(ctx)
}

func (d *Daemon) stopProxy() {
	if d.proxy != nil {
		d.proxy.Close()
	}
}

func (d *Daemon) proxyPort() int {
	if d.proxy == nil {
		return 0
	}
	return d.proxy.Port()
}

// proxyTLSPort is the proxy's https port; 0 when https is not served.
func (d *Daemon) proxyTLSPort() int {
	if d.proxy == nil {
		return 0
	}
	return d.proxy.TLSPort()
}

// proxyURL is the URL of a proxied hostname, carrying the proxy's port when
// it is not 80.
func (d *Daemon) proxyURL(host string) string {
	if d.proxy == nil {
		return "http://" + host
	}
	return d.proxy.URL(host)
}

// urlFor returns how a project's proxied names are written: https when the
// project asks for it and TLS is up, else http.
func (d *Daemon) urlFor(cfg *config.Config) func(string) string {
	return func(host string) string {
		if cfg.Project.HTTPS && d.proxy != nil {
			if u := d.proxy.SecureURL(host); u != "" {
				return u
			}
		}
		return d.proxyURL(host)
	}
}

// refreshRoutes hands the proxy the engine's table (world.Engine.Routes).
func (d *Daemon) refreshRoutes(ctx context.Context) {
	if d.proxy == nil {
		return
	}
	routes, err := d.w.Routes(ctx)
	if err != nil {
		d.log.Warn("refresh routes", "error", err)
		return
	}
	if d.tunnels != nil {
		// Another host's names never shadow this machine's own.
		local := map[string]bool{}
		for _, r := range routes {
			local[r.Host] = true
		}
		for _, r := range d.tunnels.Routes() {
			if !local[r.Host] {
				routes = append(routes, r)
			}
		}
	}
	d.proxy.Set(routes)
}

// refreshRoutesAsync is refreshRoutes for supervisor callbacks, which must
// not block.
func (d *Daemon) refreshRoutesAsync() {
	if d.proxy == nil {
		return
	}
	select {
	case d.routeKick <- struct{}{}:
	default:
	}
}

// routeLoop applies queued route refreshes one at a time.
func (d *Daemon) routeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.routeKick:
			d.refreshRoutes(ctx)
		}
	}
}
