// Package world owns the lifecycle of one world: `up` as plan and apply
// (config → worktree → admission → ports → slices → supervise → routes),
// down, remove, reset, restart, verify, run, golden templates and the
// re-adoption of what a previous daemon left running (Reconcile). Its
// Engine holds the registry, the port allocator, the adapter host and the
// supervisor; what stays the daemon's own — the event log, finding and
// locking a world, the admission queue, routes and status — reaches it as
// functions in Options, and the daemon calls an op (OpUp, OpDown…) with
// the caller's stream. The pure plan, a value printed by `up --dry-run`
// and tested as tables, is its subpackage plan.
package world
