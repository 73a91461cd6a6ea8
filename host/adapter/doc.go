// Package adapter finds adapter binaries and calls them with the host's
// policy. It owns discovery (every executable binky-adapter-<name> on the
// caller's PATH (WithCallerPath; else the host's), then in
// $BINKY_HOME/adapters, then in the system adapter directories where
// packages install them (/usr/lib/binky/adapters), each described once, in parallel with the
// others a lookup needs, and its describe or its failure cached by path,
// size and mtime in $BINKY_HOME/adapters.cache.json), name resolution (a
// binary's own name before any alias, so a lookup by name runs only that
// binary; the first directory wins and the others are listed as shadowed),
// the choice of tier (go-plugin RPC when the adapter offers it, one-shot
// otherwise or when BINKY_ADAPTER_ONESHOT=1), the deadline of every call
// (60 s unless overridden), the adapter's minimal environment, and handing
// the adapter's stderr, redacted, to the caller.
//
// Running a binary — pipes, process groups, reply limits, go-plugin — is
// github.com/binkyhq/binky/sdk/client; this package never parses a reply
// itself.
package adapter
