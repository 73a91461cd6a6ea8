// Package ctltest is a stand-in daemon for tests of ctl and of the CLI's
// daemon verbs: it answers ping and stop on a BINKY_HOME's daemon.sock and
// holds daemon.pid locked as a daemon does, and on stop it exits as a good
// daemon does, or does not (a daemon stuck in its shutdown, or one that
// ignores the request). Unix only: the daemon's lock is a flock.
package ctltest
