package supervisor

// Proc is one process, told apart from a later one that reuses its pid by
// its start time (clock ticks after boot; 0 where unknown).
type Proc struct {
	Pid       int
	StartTime uint64
}

// Pids lists the pids of procs.
func Pids(procs []Proc) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.Pid
	}
	return out
}
