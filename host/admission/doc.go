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
// The package knows worlds only by key ("project/worktree"). It never
// signals a process or writes the registry: the daemon gives it Suspend and
// Resume hooks and records what they did.
package admission
