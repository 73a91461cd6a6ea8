// Package e2e holds Binky's end-to-end tests: they build the real binaries
// (binky, the sqlite adapter, the demo app), then drive the CLI and its
// daemon in a temporary BINKY_HOME against temporary git repositories.
package e2e
