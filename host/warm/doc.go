// Package warm owns what makes a new worktree start warm (docs/warm.md):
// copying the ignored paths [worktree] copy names (node_modules, .venv,
// target, .env.local…) from the main worktree, or from copy_from's, into a
// new worktree — reflinked where the filesystem clones (FICLONE on Linux,
// clonefile on macOS), byte-copied elsewhere — and the per-worktree record
// of what was copied and of the inputs hash of the last successful
// [worktree] setup, so setup runs again only when its inputs change.
//
// Copy refuses a path git tracks (copying it would hide the branch's own
// version) and anything that would read or write outside the two
// worktrees (a glob with .., a symlinked parent directory); symlinks are
// copied as symlinks, never followed. Running setup belongs to the daemon
// (host/world/warm.go), which renders its commands like migrate's.
package warm
