// Package daemon is Binky's long-lived process: one per BINKY_HOME. It
// serves the api protocol on daemon.sock (a named pipe on Windows), keeps
// one op table (a generic op decodes a call's arguments and calls the
// engine's typed method with the call's stream), the event log, the
// admission queue and its policy (the engine suspends, resumes and
// wake-starts a world when admission says so), the proxy's routes, and
// what status adds to the engine's answer (the queue, the proxy, degraded
// mode), and wires them into host/world's Engine, which runs a world's
// lifecycle (up, down, remove, reset, restart, verify, run, golden,
// status, suspend/resume, wake-start), holds the world and repository
// locks and keeps its supervisor. The daemon implements the engine's
// interfaces (surface.go: world.Events, world.Routes, world.Admission).
// It owns degraded mode
// (degraded.go): on a home that takes no new data it starts anyway,
// re-adopts and supervises its worlds, refuses the verbs that write with
// the reason, and leaves that mode once there is room again. No caller
// holds it up: frames go out within world.FrameWait, and a stopping daemon
// gives a caller that stopped reading a second, not its op's lifetime.
//
// It reads no environment variable of its own: cmd/binkyd reads the
// daemon's tuning knobs and test switches into Options. Finding a world is
// host/world's (world.Find); findWorld calls it over the daemon's registry.
package daemon
