// Package daemon is Binky's long-lived process: one per BINKY_HOME. It
// serves the api protocol on daemon.sock (a named pipe on Windows), keeps
// the op table, the locks (one world, one repository at a time), the event
// log, the admission queue, the proxy's routes and status, and wires them
// into host/world's Engine, which runs a world's lifecycle (up, down,
// remove, reset, restart, verify, run, golden).
package daemon
