package listeners

import "errors"

// ErrNoPeer is PeerUID's and PeerOf's answer when no socket of this host
// is the client end of the connection asked about: it has closed, or the
// client is on another machine or in another network namespace.
var ErrNoPeer = errors.New("no socket of this host is the client end of the connection")

// Peer is the user at the client end of a TCP connection between two
// sockets of this host, as PeerOf finds it.
type Peer struct {
	// Mine says it is this process's user: the same effective uid on
	// Unix, the same user SID on Windows.
	Mine bool
	// User names it for logs: "uid 1001", or a Windows SID.
	User string
}
