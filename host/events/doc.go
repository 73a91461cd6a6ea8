// Package events owns $BINKY_HOME/events.log: one JSON object per line for
// every step Binky takes (a worktree created, a port block reserved, a
// service started, exited or adopted…). It defines the event names, appends
// events with every text field passed through a redact.Redactor, and reads
// the newest events back, optionally for one worktree, for status and the
// dashboard. docs/events.md lists every name and what it means.
//
// An event carries names (project, worktree, service, adapter), small
// numbers (pid, exit code, duration) and, on failure, the error text. It
// never carries a config value.
package events
