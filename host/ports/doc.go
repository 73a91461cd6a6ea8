// Package ports owns the machine-global port allocator: one block of
// consecutive ports per worktree, for every project of every BINKY_HOME on
// the machine.
//
// Within one home, a block is searched for inside the registry's write
// transaction, so two reservations — in one daemon or in two processes —
// never see the same ports as free; the registry itself refuses a block
// that overlaps another of the home's. Across homes (an agent per home, a
// test home, two users on one host) the blocks are leased in a store every
// binky process on the machine shares (Leases: one file per leased block in
// DefaultLeaseDir, /tmp/binky-port-leases on Unix, sticky and
// world-writable; %ProgramData%\binky\port-leases on Windows;
// $BINKY_PORT_LEASES overrides it). Every reservation, release and prune
// holds the store's lock (flock, LockFileEx) around the registry
// transaction; a block another home leases is skipped like another
// worktree's, and the chosen block is leased before the registry commits
// it, so a block kept by a down world is never handed out twice. A lease
// whose home is gone — its directory deleted, or its home.id missing or
// naming another id — is reclaimed; a live home's never is, nor one this
// user may not delete. SyncLeases, at daemon start, drops this home's
// leases its registry no longer has and leases its blocks that have none.
//
// Every port handed out is first proven free by binding it (TCP) on
// 127.0.0.1, ::1 and 0.0.0.0; a port something holds is skipped, and the
// search moves past it rather than guessing around it. Blocks persist across
// `down`/`up` and daemon restarts until Release. Owner names a port's
// holder (host/listeners).
//
// The default range, 20000–29999, lies below the ephemeral ranges from which
// operating systems pick the local port of outgoing connections (Linux
// 32768–60999, Windows and macOS 49152–65535), so those cannot take a
// world's port between two restarts, and above the ports development servers
// usually claim (3000, 5432, 6379, 8080…). A project sets its own with
// [project] port_range.
package ports
