//go:build !windows

package api

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

// ListenSocket listens on the daemon's socket path, 0600. The caller
// holds the home's lock, so whatever is at the path is stale and is
// removed first.
func ListenSocket(sock string) (net.Listener, error) {
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", sock, socketPathError(sock, err))
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", sock, err)
	}
	// Closing a listener must not unlink the path: by then it may be the
	// socket of the listener that replaced it (KeepSocket). The daemon
	// removes the path itself when it stops.
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	return ln, nil
}

// KeepSocket keeps the socket path reaching the daemon until ctx ends,
// then closes the listener. A daemon.sock deleted (a temp cleaner, a
// careless rm) or replaced under a running daemon would leave every CLI
// call finding no daemon and then failing to start one (the lock is the
// daemon's): so every interval the path is checked, and listened on again
// (serveOn serves the new listener) when it is no longer the socket ln
// made. warn is the daemon's log.
func KeepSocket(ctx context.Context, sock string, ln net.Listener, serveOn func(net.Listener), every time.Duration, warn func(msg string, args ...any)) {
	cur := ln
	made, _ := os.Lstat(sock)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			cur.Close()
			return
		case <-t.C:
		}
		if now, err := os.Lstat(sock); err == nil && made != nil && os.SameFile(made, now) {
			continue
		}
		nl, err := ListenSocket(sock)
		if err != nil {
			warn("daemon.sock is gone and cannot be made again", "error", err)
			continue
		}
		made, _ = os.Lstat(sock)
		warn("daemon.sock was removed or replaced; listening on it again", "path", sock)
		serveOn(nl)
		cur.Close()
		cur = nl
	}
}
