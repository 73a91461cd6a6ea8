// Package daemon is Binky's long-lived process: one per BINKY_HOME. It
// serves, locks the home and wires. It serves the api protocol on
// daemon.sock (a named pipe on Windows; the listener and its upkeep are
// host/api's) with one op table (a generic op decodes a call's arguments
// and calls the engine's typed method with the call's stream) and the
// frame stream; it locks the home (daemon.pid) and opens its registry,
// event log and port leases; and it wires host/world's Engine, which runs
// a world's lifecycle (up, down, remove, reset, restart, verify, run,
// golden, reserve, status, suspend/resume, wake-start, the route table and
// admission as the worlds live it), to the rest: the admission controller
// it builds (admission.go; host/admission), the proxy it starts and hands
// the engine's routes and waker (routes.go), what status adds to the
// engine's answer (the queue, the proxy, degraded mode), the memory trim
// (host/memtrim) and the implementations of the engine's interfaces
// (surface.go: world.Events, world.Routes). Degraded mode, on a home that
// takes no new data, is host/degraded's; the daemon says which verbs write
// (degraded.go). No caller holds it up: frames go out within
// world.FrameWait, and a stopping daemon gives a caller that stopped
// reading a second, not its op's lifetime.
//
// It reads no environment variable of its own: cmd/binkyd reads the
// daemon's tuning knobs and test switches into Options (and serves Go's
// profiler itself). Finding a world is host/world's (world.Find);
// findWorld calls it over the daemon's registry.
package daemon
