// Package dashboard owns the page at http://binky.localhost: every world
// (project, worktree, state), each service with its state, port and link,
// the last verify result and the recent events.
//
// It is server-rendered html/template with inline CSS and no script or build
// step, read-only, and reloads itself every few seconds. Its data comes from
// a Source the daemon implements by adapting registry rows to the plain
// structs defined here; the package knows nothing of the registry.
package dashboard
