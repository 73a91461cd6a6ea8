// Package world owns the lifecycle of one world: `up` as plan and apply
// (config → worktree → admission → ports → slices → supervise → routes),
// down, remove, reset, restart, verify, run, golden templates and the
// re-adoption of what a previous daemon left running (Reconcile), the
// worlds' status (Status: from the records, the supervisor's live state,
// health and the last verify; status.go), the config of a recorded world
// (Config), suspend, resume and pause (suspend.go) and the start of a
// woken down world from its recorded run specs (WakeStart, through up's
// own start loop). Its Engine holds the registry, the port allocator, the
// adapter host (through the consumer interface Adapters, adapters.go) and
// the supervisor, which it hands to nobody; what stays the daemon's own —
// the event log, locking a world, the admission queue and routes —
// reaches it as functions in Options, and the daemon calls an op (OpUp,
// OpDown…) with the caller's stream. The Stream (stream.go) writes every
// frame within
// FrameWait, so a caller that stops reading loses its stream instead of
// holding the op; the Lock (lock.go), which the daemon keeps one of per
// world and per repository, is taken with a context and names its holder
// to a waiter. The pure plan, a value printed by `up --dry-run` and tested
// as tables, is its subpackage plan.
//
// It owns finding a world by name, branch or directory (Find, find.go):
// a function over two registry reads (Lookup) with no daemon behind it, so
// the daemon and binkyd logs, reading the registry itself, resolve names
// by the same rules.
package world
