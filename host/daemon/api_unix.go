//go:build !windows

package daemon

import (
	"context"
	"net"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// listenAPI listens on daemon.sock (0600, peer uid checked).
func (d *Daemon) listenAPI(sock string) (net.Listener, error) { return api.ListenSocket(sock) }

// holdAPI keeps the socket reaching this daemon until ctx ends.
func (d *Daemon) holdAPI(ctx context.Context, sock string, ln net.Listener, serveOn func(net.Listener)) {
	api.KeepSocket(ctx, sock, ln, serveOn, time.Second, d.log.Warn)
}
