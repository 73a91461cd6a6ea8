// Package tunnel reaches another machine's worlds from this one: for each
// host of hosts.toml that has worlds this home attached, it keeps an
// OpenSSH multiplexing master of its own alive, adds a local forward
// (127.0.0.1:<local> → the host's 127.0.0.1:<port>) through it for each
// port of those worlds (`ssh -O forward`, `-O cancel`), and hands the
// proxy routes for their *.localhost names to those forwards, marked
// remote.
//
// It learns the host's worlds by asking the host's daemon (status, over
// the same ssh road the CLI uses) when told to (Manager.Attach, after a
// verb run with --host) and on a slow poll. When the master dies, the
// routes stay and say "reconnecting to <host>"; the master is made again
// with backoff and the forwards added again on the same local ports. A
// world that is down or gone loses its routes and forwards; a host with
// no world left loses its master.
//
// It owns no world and imports neither host/world nor host/daemon: the
// daemon wires it (the port block, the proxy's table).
package tunnel
