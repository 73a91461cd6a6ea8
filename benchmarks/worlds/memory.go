package main

// usage is the memory of a set of processes, in KiB.
type usage struct {
	pss      int64 // sum of their PSS
	pssShmem int64 // the part of pss that is shared memory (SysV, /dev/zero, /dev/shm…)
	shared   int64 // the whole resident size of those shared memory objects
	wholeOK  bool  // shared could be read (it needs root)
	procs    int
	others   int // processes counted that a shared server ran for someone else
}

// whole counts each shared memory object at its full resident size, pages
// no living process has touched included, instead of the shares of it in
// PSS: PostgreSQL's buffers stay resident after the backend that filled them
// exits, and PSS only sees the pages some live process still maps.
func (u usage) whole() int64 { return u.pss - u.pssShmem + u.shared }
