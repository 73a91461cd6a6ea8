// Package memtrim owns handing back the memory a long-lived process touched
// once and no longer uses: the free pages of the Go heap, and on Linux the
// pages of the process's own executable that are mapped but idle.
//
// Most of an idle daemon's resident set is its binary image, not its heap:
// each page fault on a file mapping maps up to 16 neighbouring pages from the
// page cache ("fault-around"), so the code that runs once at start (package
// initialisation, opening the registry, the first up of a world) leaves most
// of the text and read-only data mapped. Trim drops those mappings with
// MADV_DONTNEED. The pages stay in the page cache as clean, unmapped cache
// the kernel can reclaim first, and the ones the process needs again come
// back by a minor fault on first use, without I/O. Only read-only mappings
// of the executable's own inode with no private copies (no breakpoint a
// debugger wrote) are touched; the writable data segment never is.
//
// Idle decides when: after a quiet spell with no call in flight, once per
// burst of activity. Start wires both for the daemon: an Idle that trims,
// and a Pacer over its proxy's requests (start.go).
package memtrim
