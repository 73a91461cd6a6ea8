// Package cli is what the two binaries, binky and binkyd, share: the run
// loop around kong, the exit status a verb returns, the version string,
// the default BINKY_HOME, and the flags of the verbs binky hands off to
// binkyd (so both parse, complete and print help for them alike).
//
// It must stay light: binky links it, and binky's fence
// (cmd/binky/deps_test.go) keeps adapters, MCP, certificates and the
// daemon out of binky.
package cli
