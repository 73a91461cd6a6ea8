// Package world owns the lifecycle of one world: `up` as plan and apply
// (config → worktree → admission → ports → slices → supervise → routes),
// down, remove, reset, restart, verify, run, golden templates and the
// re-adoption of what a previous daemon left running (Reconcile), the
// worlds' status (Status: from the records, the supervisor's live state,
// health and the last verify; status.go), the config of a recorded world
// (Config), suspend, resume and pause (suspend.go), the start of a
// woken down world from its recorded run specs (WakeStart, through up's
// own start loop), admission as the worlds live it (admission.go: the
// controller the daemon hands over with StartAdmission; admit, step 3 of
// up; the controller's hooks; binky reserve as Reserve), the proxy's
// waker (Waker, waker.go), the start of one wake = true service on its
// first request and its idle stop (WakeService, wakeservice.go) and the
// route table (Routes, routes.go). Its Engine holds the registry, the port allocator, the
// adapter host (through the consumer interface Adapters, adapters.go) and
// the supervisor, which it hands to nobody. Its operations are typed
// methods — Up(ctx, api.UpArgs, Progress) (*api.World, error), Down,
// Remove, Reset, Restart, Verify, Run, Golden — that take the caller as a
// Progress (what they tell it, and whether it left); none decodes JSON.
// What is not about worlds reaches it through small interfaces declared
// here (surface.go) — Events, Routes — each with a no-op (NoEvents,
// NoRoutes, NoProgress), which the daemon implements. The Stream (stream.go), a Progress the daemon hands an op,
// writes every frame within FrameWait, so a caller that stops reading
// loses its stream instead of holding the op. The engine finds and locks
// worlds itself: a Lock (lock.go) per world (WorldLock) and per
// repository, taken with a context, naming its holder to a waiter;
// lockWorld (worldlock.go) finds a world, waits for its lock and reads its
// record again. The pure plan, a value printed by `up --dry-run` and
// tested as tables, is its subpackage plan.
//
// It owns finding a world by name, branch or directory (Find, find.go):
// a function over two registry reads (Lookup) with no daemon behind it, so
// the engine, the daemon and binkyd logs, reading the registry itself,
// resolve names by the same rules.
package world
