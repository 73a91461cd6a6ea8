package e2e

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
)

// Each test gets a port range of its own (nextRange) from its run's
// window: one of portWindows windows of portWindow ports from portFirst,
// below the kernel's ephemeral range (32768 on Linux) where no outgoing
// connection takes a port from under a world. Two runs at once (two
// sessions, two `make test`s on one machine) take different windows: each
// test has a port lease store of its own, so without windows the
// allocators of two runs, handed the same range, would each see a port the
// other's world has leased but not yet bound as free, and hand it out
// twice.
//
// A run holds its window by listening on the window's lock port
// (portLockFirst+k on 127.0.0.1) for as long as it runs; the kernel lets
// it go when the process ends, however it ends, so no lock is ever stale.
// A run finding every window held shares one (it says so): its tests may
// then meet the other run's ports, which the allocator steps over.
//
// Ranges are handed out in order and wrap around within the window: a
// range comes back only after portWindow/60 = 50 further tests' ranges,
// long after the test that had it ended (tests run a few at a time).
const (
	portFirst     = 20000
	portWindow    = 3000
	portWindows   = 4 // 20000–31999
	portLockFirst = 19990
)

var portAlloc struct {
	sync.Mutex
	base, next int
}

// claimPortWindow takes the first window no other run holds, for the
// life of this process; release lets it go.
func claimPortWindow() (release func()) {
	for k := range portWindows {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(portLockFirst+k))
		if err != nil {
			continue // another run's (or the port is otherwise taken)
		}
		portAlloc.base = portFirst + k*portWindow
		return func() { l.Close() }
	}
	k := os.Getpid() % portWindows
	fmt.Fprintf(os.Stderr, "e2e: every port window (%d-%d) is held by other runs; sharing window %d, so a test may meet another run's ports\n",
		portLockFirst, portLockFirst+portWindows-1, k)
	portAlloc.base = portFirst + k*portWindow
	return func() {}
}

// nextRange is a range of size ports for one test: the next of this run's
// window.
func nextRange(size int) [2]int {
	portAlloc.Lock()
	defer portAlloc.Unlock()
	if portAlloc.next+size > portWindow {
		portAlloc.next = 0
	}
	lo := portAlloc.base + portAlloc.next
	portAlloc.next += size
	return [2]int{lo, lo + size - 1}
}
