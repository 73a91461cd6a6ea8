// Package doctor checks the machine and a BINKY_HOME for what stops Binky
// from working (binky doctor). Each check lives in its own file and
// returns Findings: what it looked at, whether that is fine, and — when it
// is not — the one command that fixes it.
//
// Doctor never changes anything: it opens the registry read-only, pings
// the daemon without starting it, reads /proc and statfs, and runs only
// read-only commands (git --version, getent hosts, adapters' describe).
package doctor
