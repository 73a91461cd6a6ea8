// Package daemon is Binky's long-lived process: one per BINKY_HOME. It owns
// the registry, the event log, the port allocator, the adapter host, the
// supervisor and the proxy, and serves the api protocol on daemon.sock. Each
// op (up, down, remove, status, env, verify, reset) lives in its own file and
// reads left to right through the host packages, as DESIGN.md's data flow.
package daemon
