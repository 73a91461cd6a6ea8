// Package health owns the readiness probes of cmd services: an HTTP GET that
// must answer 2xx or 3xx, a TCP connect, or a shell command that must exit 0.
// Check makes one attempt; Wait repeats attempts until the probe passes, its
// timeout elapses, or the process it watches dies. A Prober makes the
// attempts of one process's probe and keeps an http probe's connection
// alive between them (kept.go: a plain http:// probe writes its request
// and reads the answer itself on that connection, bounded by a deadline on
// it); the package's functions keep no connection.
//
// WaitWith also takes an Owner hook: after an http or tcp attempt passed it
// is given the address the attempt connected to and may fail the attempt —
// the supervisor uses it so that only the service's own listener counts
// (another program answering on the service's port is not health). Where
// the platform cannot tell who listens (no /proc), that hook passes.
package health
