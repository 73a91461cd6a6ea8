// Package ports owns the machine-global port allocator: one block of
// consecutive ports per worktree, for every project of every BINKY_HOME on
// the machine.
//
// Within one home, a block is searched for inside the registry's write
// transaction, so two reservations — in one daemon or in two processes —
// never see the same ports as free; the registry itself refuses a block
// that overlaps another of the home's. No world's block is wider than
// MaxBlock (256) ports: a world that asks for more is refused.
//
// Across homes (an agent per home, a test home, two users on one host) the
// blocks are leased in a store every binky process on the machine shares
// (Leases, in DefaultLeaseDir: /tmp/binky-port-leases on Unix,
// %ProgramData%\binky\port-leases on Windows; $BINKY_PORT_LEASES
// overrides it). That directory is trusted only when root (an
// administrator) or the caller owns it, and on Unix when it is sticky if
// others may write it; otherwise every use fails with a DirRefusedError
// that says how to fix it (the .deb makes it root's with systemd-tmpfiles).
// It holds one subdirectory per user (uid-<uid>, sid-<SID> on Windows;
// uid-<uid>.2… when another user took the name first), made, written and
// locked by that user only and readable by all: one file per leased block
// (block-<lo>-<hi>.json) and the user's lock file (0600).
//
// A lease is a claim another user can verify (leaseclaim.go). It counts
// only when it is a regular file (opened without following a link or
// blocking on a FIFO), owned by the user it names, in that user's own
// subdirectory, no wider than MaxBlock, of ports that user could bind
// (on Linux none below net.ipv4.ip_unprivileged_port_start unless root's),
// and its home still stands: the daemon it names runs (pid, start time and
// user, from /proc) or its home directory exists, is its user's (or lies
// in a directory of its user's this reader cannot enter) and holds its
// home.id. Anything else is ignored, never counted, and reported
// (IgnoredLease: "ignored port lease <path> (owner uid N): <reason>";
// Allocator.IgnoredLeases for up, InspectLeases for doctor). A user's own
// leases of gone homes are deleted; other users' are only ignored.
//
// So leases give a user no more ports than binding would: every port a
// lease keeps from others is one its owner could have kept by listening
// on it (the allocator steps over held ports anyway), and the lease names
// who keeps it, in a file only that user (or root) can write. A lease a
// user could not back by a bind — another user's name, ports below the
// unprivileged bound, more than one world's block, a home that is gone —
// counts for nothing.
//
// No lock is shared between users. Within one user, every reservation,
// release and sync holds the user's lock (flock, LockFileEx; polled, and
// given up after LeaseOptions.LockWait with a LockBusyError naming the
// lock file and, on Linux, its holder from /proc/locks) around the registry
// transaction, and the chosen block is leased before the registry commits
// it, so a block kept by a down world is never handed out twice. Across
// users, a reservation writes its lease, then reads every other user's
// leases again; on an overlap it removes its lease, waits a random moment
// and searches again (bounded). Of two racing writers at least one sees
// the other's lease, so they never both keep overlapping ones.
//
// SyncLeases drops this home's leases its registry no longer has, leases
// its blocks that have none (and reports those another home took as
// Contested), and removes this home's leases of the old format (files at
// the top of the directory, which no reader counts any more). The daemon
// runs it in the background, bounded and retried, so it never waits for
// the store to start; until it gets through, every reservation runs it
// first.
//
// Every port handed out is first proven free by binding it (TCP) on
// 127.0.0.1, ::1 and 0.0.0.0; a port something holds is skipped, and the
// search moves past it rather than guessing around it. Blocks persist across
// `down`/`up` and daemon restarts until Release. A world that needs more
// ports than its block has grows the block in place when the ports right
// after it are free (in no other block, leased by no other home, bound by
// no program), so its running services keep their ports; only otherwise
// does it move to a new block. Growable tells a plan beforehand which it
// will be (grow.go). Owner names a port's holder (host/listeners);
// AddrHolder names another binky home's daemon by its home id when it is
// the one holding a proxy's address (holder.go). A home's id is mirrored
// in its HomeIDFile, which the daemon writes at start (WriteHomeID,
// homeid.go) and every lease check reads.
//
// The default range, 20000–29999, lies below the ephemeral ranges from which
// operating systems pick the local port of outgoing connections (Linux
// 32768–60999, Windows and macOS 49152–65535), so those cannot take a
// world's port between two restarts, and above the ports development servers
// usually claim (3000, 5432, 6379, 8080…). A project sets its own with
// [project] port_range.
package ports
