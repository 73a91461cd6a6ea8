//go:build !windows

package daemon

import (
	"context"
	"net"
	"time"
)

// listenAPI listens on daemon.sock (0600, peer uid checked).
func (d *Daemon) listenAPI(sock string) (net.Listener, error) { return listenSocket(sock) }

// holdAPI keeps the socket reaching this daemon until ctx ends.
func (d *Daemon) holdAPI(ctx context.Context, sock string, ln net.Listener, serveOn func(net.Listener)) {
	d.keepSocket(ctx, sock, ln, serveOn, time.Second)
}
