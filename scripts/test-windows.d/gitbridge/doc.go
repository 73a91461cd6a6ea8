// Command gitbridge is the Windows test tier's git (scripts/test-windows,
// docs/windows.md): Git for Windows cannot be installed in the tier's Wine
// prefix, so the e2e tests under Wine reach the Linux git through this
// bridge. Built for windows it is git.exe: it writes the request (the
// working directory and arguments, Windows paths turned into Unix ones,
// and the GIT_* environment) into a directory under /tmp, starts the same
// program built for linux (Wine runs an ELF file given to CreateProcess as
// a Unix process, but hands back no handle to wait on), waits for its
// answer files and prints them, Unix paths in git's output turned back
// into Windows ones. Built for linux it is that runner. It lives in the
// tier's prefix only, never in the product.
package main
