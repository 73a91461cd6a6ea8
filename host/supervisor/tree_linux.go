//go:build linux

package supervisor

import (
	"slices"
	"syscall"
	"time"
)

// WorldTree lists the live processes that belong to the services whose
// session leaders are leaders (each service runs in a session of its own):
// every process still in one of those sessions, and every descendant of
// those by parent pid, whatever its group, session or environment. So a
// child that called setsid and cleared its marker is found while its
// parent runs; one already orphaned is found only if it kept the session.
// Taken before a stop, it is what the stop must have ended (Survivors).
func WorldTree(leaders []int) []Proc {
	if len(leaders) == 0 {
		return nil
	}
	stats := map[int]procStat{}
	children := map[int][]int{}
	for _, pid := range allPids() {
		s, err := readStat(pid)
		if err != nil || s.dead() {
			continue
		}
		stats[pid] = s
		children[s.Ppid] = append(children[s.Ppid], pid)
	}
	seen := map[int]bool{}
	var queue []int
	for pid, s := range stats {
		if slices.Contains(leaders, pid) || slices.Contains(leaders, s.Session) {
			seen[pid] = true
			queue = append(queue, pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	out := make([]Proc, 0, len(seen))
	for pid := range seen {
		out = append(out, Proc{Pid: pid, StartTime: stats[pid].StartTime})
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.Pid - b.Pid })
	return out
}

// Survivors lists those of procs that still run: the same pid with the
// same start time, not a zombie.
func Survivors(procs []Proc) []Proc {
	var out []Proc
	for _, p := range procs {
		if s, err := readStat(p.Pid); err == nil && !s.dead() && s.StartTime == p.StartTime {
			out = append(out, p)
		}
	}
	return out
}

// EndProcs ends procs: sig, then SIGKILL for what is left after grace. It
// returns the pids still alive after that.
func EndProcs(procs []Proc, sig syscall.Signal, grace time.Duration) []int {
	for _, p := range Survivors(procs) {
		_ = signalPid(p.Pid, sig)
	}
	if pollUntil(grace, func() bool { return len(Survivors(procs)) == 0 }) {
		return nil
	}
	for _, p := range Survivors(procs) {
		_ = signalPid(p.Pid, killSignal)
	}
	pollUntil(killWait, func() bool { return len(Survivors(procs)) == 0 })
	return Pids(Survivors(procs))
}
