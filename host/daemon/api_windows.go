//go:build windows

package daemon

import (
	"context"
	"net"

	"github.com/binkyhq/binky/host/api"
)

// listenAPI listens on the named pipe \\.\pipe\binky-<home id>, whose DACL
// admits only this user (api.ListenPipe); clients check that its server
// runs as their user. There is no file to keep: the pipe lives while the
// daemon does.
func (d *Daemon) listenAPI(string) (net.Listener, error) { return api.ListenPipe(d.homeID) }

// holdAPI closes the pipe when ctx ends.
func (d *Daemon) holdAPI(ctx context.Context, _ string, ln net.Listener, _ func(net.Listener)) {
	<-ctx.Done()
	ln.Close()
}
