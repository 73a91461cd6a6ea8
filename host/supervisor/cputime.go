package supervisor

import "time"

// MarkedCPU is the CPU time (user and system) the live processes whose
// marker starts with prefix have used so far; false where it cannot be
// read (outside Linux). Idle suspension compares two readings.
func MarkedCPU(prefix string) (time.Duration, bool) { return markedCPU(prefix) }
