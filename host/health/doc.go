// Package health owns the readiness probes of cmd services: an HTTP GET that
// must answer 2xx or 3xx, a TCP connect, or a shell command that must exit 0.
// Check makes one attempt; Wait repeats attempts until the probe passes, its
// timeout elapses, or the process it watches dies.
package health
