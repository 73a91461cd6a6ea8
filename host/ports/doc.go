// Package ports owns the machine-global port allocator: one block of
// consecutive ports per worktree, for every project under one BINKY_HOME.
//
// A block is searched for inside the registry's write transaction, so two
// reservations — in one daemon or in two processes — never see the same
// ports as free; the registry itself refuses a block that overlaps another.
// Every port handed out is first proven free by binding it (TCP) on
// 127.0.0.1, ::1 and 0.0.0.0; a port something holds is skipped, and the
// search moves past it rather than guessing around it. Blocks persist across
// `down`/`up` and daemon restarts until Release.
//
// The default range, 20000–29999, lies below the ephemeral ranges from which
// operating systems pick the local port of outgoing connections (Linux
// 32768–60999, Windows and macOS 49152–65535), so those cannot take a
// world's port between two restarts, and above the ports development servers
// usually claim (3000, 5432, 6379, 8080…). A project sets its own with
// [project] port_range.
package ports
