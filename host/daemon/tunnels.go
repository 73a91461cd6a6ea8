package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/remote"
	"github.com/binkyhq/binky/host/tunnel"
)

// forwardsProject is the registry's project name of the port blocks the
// tunnels take for their forwards (one block per host, its worktree name
// the host's): no project can be called that.
const forwardsProject = "@remote"

// listWait bounds one read of a host's worlds; attachWait one attach.
const (
	listWait   = 45 * time.Second
	attachWait = 90 * time.Second
)

// startTunnels wires host/tunnel: hosts of this home's hosts.toml, their
// daemons reached over ssh, ports from this home's allocator, routes into
// the proxy's table.
func (d *Daemon) startTunnels(ctx context.Context) {
	d.tunnels = &tunnel.Manager{
		Open:     d.openTunnel,
		Changed:  d.refreshRoutesAsync,
		Attached: filepath.Join(d.home, tunnel.AttachedFile),
		Logger:   d.log.Named("tunnel"),
	}
	d.tunnels.Start(ctx)
}

func (d *Daemon) openTunnel(name string) (tunnel.Options, error) {
	f, err := remote.Load(d.home)
	if err != nil {
		return tunnel.Options{}, err
	}
	h, err := f.Lookup(name)
	if err != nil {
		return tunnel.Options{}, err
	}
	r := &remote.Remote{Host: h, Home: d.home, Wire: api.WireVersion, Version: d.opts.Version}
	cl := &api.Client{Home: h.Home, Dial: r.Dial, Where: "host " + h.Name}
	return tunnel.Options{
		Host: h, Home: d.home, Runner: tunnel.ExecRunner{},
		List: func(ctx context.Context) (*api.StatusResult, error) {
			ctx, cancel := context.WithTimeout(ctx, listWait)
			defer cancel()
			var res api.StatusResult
			err := cl.Call(ctx, api.OpStatus, api.StatusArgs{}, api.Handlers{}, &res)
			return &res, err
		},
		Ports:  (*tunnelPorts)(d),
		Logger: d.log.Named("tunnel").With("host", name),
	}, nil
}

// tunnelPorts sets aside a host's forward ports as a port block of this
// home, so no world (of any home on the machine) is handed them.
type tunnelPorts Daemon

func (p *tunnelPorts) Reserve(ctx context.Context, host string, n int) (int, int, error) {
	return p.ports.Reserve(ctx, forwardsProject, host, n, ports.DefaultRange())
}

func (p *tunnelPorts) Release(ctx context.Context, host string) error {
	_, _, err := p.ports.Release(ctx, forwardsProject, host)
	return err
}

func (d *Daemon) stopTunnels() {
	if d.tunnels != nil {
		d.tunnels.Close()
	}
}

// opAttach reaches a host's worlds from here (binky --host HOST up, and
// every verb after it that changes them): read them now, hold their
// forwards and routes.
func (d *Daemon) opAttach(ctx context.Context, raw json.RawMessage, _ *stream) (any, error) {
	var a api.AttachArgs
	if err := api.Decode(raw, &a); err != nil {
		return nil, err
	}
	if a.Host == "" {
		return nil, api.Errorf(api.CodeInvalid, "attach: no host named")
	}
	ctx, cancel := context.WithTimeout(ctx, attachWait)
	defer cancel()
	snap, err := d.tunnels.Attach(ctx, a.Host)
	if err != nil && snap.Host == "" {
		return nil, api.Errorf(api.CodeInvalid, "reach host %s: %v", a.Host, err)
	}
	res := snap.Result()
	if err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	res.ProxyPort, res.TLSPort = d.proxyPort(), d.proxyTLSPort()
	d.refreshRoutes(ctx)
	return res, nil
}

// remoteWorlds are the worlds of other hosts this home reaches, marked
// with their host, for status.
func (d *Daemon) remoteWorlds() []api.World { return d.remoteWorldsHere(false) }

// remoteWorldsHere is remoteWorlds, with each service's port the local
// forward's too when localPorts is set: the dashboard shows what answers
// here.
func (d *Daemon) remoteWorldsHere(localPorts bool) []api.World {
	if d.tunnels == nil {
		return nil
	}
	return d.tunnels.Worlds(d.proxyPort(), d.proxyTLSPort(), localPorts)
}
