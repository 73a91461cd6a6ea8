//go:build !windows

package api

import (
	"context"
	"net"
)

// Endpoint is where the daemon of home listens: its socket file.
func Endpoint(home string) string { return Socket(home) }

// dial connects to the daemon's unix socket (0600; the daemon checks the
// peer's uid).
func dial(ctx context.Context, home string) (net.Conn, error) {
	var d net.Dialer
	sock := Socket(home)
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, socketPathError(sock, err)
	}
	return c, nil
}
