// Package supervisor owns the cmd-service processes of every world the daemon
// runs: it spawns each one with sh -c in a session of its own, its output
// appended straight to its log file, restarts it by policy with backoff and a
// give-up cap, restarts it when watched files change, stops its whole process
// group, and re-adopts what still runs after a daemon restart (start time
// guards against pid reuse; exits of processes that are not our children are
// learnt through pidfd). It also rolls, reads and follows service logs.
//
// The supervisor persists nothing itself: it reports starts and exits to a
// Store the caller provides, and events to a callback. A service's state is
// a state.Service of host/state's shared vocabulary; the supervisor moves a
// command through starting, running (its probe passed, or it has none),
// unhealthy, backoff, stopping, stopped, exited, failed and lost.
package supervisor
