// Package degraded owns the daemon's degraded mode: the daemon of a home
// that takes no new data (a full disk, a spent quota, a read-only file
// system). Services outlive the daemon, so a daemon that could not start
// would leave them unsupervised until space returned; instead it starts
// anyway, with its registry read-only (registry.Open), re-adopts and
// supervises its worlds, serves status and env, and refuses every verb
// that would write with Message. What it learns meanwhile (a restart, an
// exit) is not recorded; it is written once the home takes data again.
//
// A Mode says whether the daemon is degraded and why (Degraded), enters
// it at start (Start) or when a write of the start fails for want of room
// (Tolerate), and checks the home again every Retry (Run), before each
// verb that writes (Refusal) and for status (Status). It leaves degraded
// mode without a restart once there is room, finishing what the start
// skipped: home.id (HomeID) and, through the daemon's Finisher, the event
// log and the registry records.
//
// The daemon keeps only which verbs write (host/daemon writing).
package degraded
