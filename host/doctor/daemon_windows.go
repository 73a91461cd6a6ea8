package doctor

import "io/fs"

// socketMode: Windows sockets carry ACLs, not modes; the daemon checks the
// peer itself.
func socketMode(string, fs.FileInfo) []Finding { return nil }
