// Package state is Binky's one vocabulary of world and service states: the
// strings the registry stores, status and MCP report, the dashboard and
// the CLI colour. A World is a worktree's world as a whole; a Service is
// one of its services (a supervised process or an adapter's slice). Each
// value says in its doc comment who writes it and what it means.
//
// The package imports nothing, so every layer can share it: the registry
// stores these types and refuses a value that is not one of them, the
// supervisor reports Service values, the wire (host/api) carries them as
// the same plain strings, and cmd/binky reads them without linking the
// registry. Methods answer the questions several places ask of a state
// (Serving, Live, Ended, Running); a question asked in one place stays
// there as a switch over the constants.
//
// Two things that look alike are not here: the daemon's degraded mode
// (host/daemon/degraded.go: its home takes no new data; status says so in
// its own "degraded" field) is a state of the daemon, not of a world; and
// a proxy route's state (host/proxy) is what a browser's request meets, a
// reduction of a service's and its world's states made by the daemon.
// Golden templates (host/golden) and verify runs have their own words.
package state
