// Package admission decides which worlds may run at once. It owns the FIFO
// queue an `up` waits in (bounded by the machine's max_parallel over all
// worlds, a project's over its own, the free-RAM reserve and the free-disk
// headroom), the jobs queue heavy commands wait in (`binky run`, verify
// checks: bounded by the machine's jobs, a project's, and the RAM reserve),
// the journal that records the queue across a daemon restart, the
// pressure source those bounds are measured against (an interface:
// production reads /proc/meminfo and statfs, tests inject their own), and
// the suspend-and-resume policy applied when a running swarm later crosses
// the RAM reserve.
//
// The package knows worlds only by key ("project/worktree", Key). It never
// signals a process or writes a world's record: the daemon gives it the
// engine's Suspend and Resume hooks, and the engine (host/world
// admission.go) records what they did. It owns the machine's bounds
// (Bounds, bounds.go: the defaults under what `binky reserve` recorded in
// the registry's settings, checked before they are written) and what
// status and reserve show of it (AddStatus, Pressure, status.go: the
// queue, suspensions, the pressure against the reserves).
package admission
