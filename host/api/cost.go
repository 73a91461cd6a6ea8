package api

import "time"

// Cost is what one world takes on the machine: the memory and CPU of its
// processes, the disk of its worktree's files git does not track, and
// its slices on their servers. Process figures are read at each status;
// disk and slice figures are measured in the background and reported
// with when they were taken.
type Cost struct {
	// Source says where the process figures come from: "cgroup" (the
	// world's cgroup v2), "processes" (the processes carrying the world's
	// marker) or "unavailable" (this platform cannot tell).
	Source string `json:"source"`
	// Processes is how many live processes the world runs.
	Processes int `json:"processes"`
	// RSS is the sum of its processes' resident memory. Pages several
	// processes share are counted in each.
	RSS int64 `json:"rss_bytes"`
	// Memory is the cgroup's charged memory (memory.current: resident
	// memory and page cache), when Source is cgroup.
	Memory int64 `json:"cgroup_memory_bytes,omitempty"`
	// CPU is the CPU time its processes have used: the cgroup's total
	// (dead processes included), or the live processes' sum.
	CPU time.Duration `json:"cpu_ns"`
	// CPUPercent is the CPU used between the previous reading and this
	// one, as a percentage of one core (-1: no previous reading).
	CPUPercent float64 `json:"cpu_percent"`
	// Disk is the worktree's untracked and ignored files; nil until first
	// measured.
	Disk *DiskCost `json:"disk,omitempty"`
	// Slices are the world's slices' sizes, one per adapter service.
	Slices []SliceCost `json:"slices,omitempty"`
	// SliceBytes sums Slices' Bytes less their Shared bytes.
	SliceBytes int64 `json:"slice_bytes"`
}

// DiskCost is the worktree's files git does not track, measured in the
// background (sizes as the files say, not blocks).
type DiskCost struct {
	// Untracked is the files git lists as untracked (not ignored).
	Untracked int64 `json:"untracked_bytes"`
	// Ignored is the files .gitignore hides (build output, node_modules).
	Ignored int64 `json:"ignored_bytes"`
	// Files counts both kinds.
	Files int `json:"files"`
	// Partial says the walk stopped at its time bound: the figures are
	// at least this much.
	Partial bool `json:"partial,omitempty"`
	// Error says why the measure failed (the last good figures stay).
	Error string `json:"error,omitempty"`
	// At is when the figures were taken.
	At time.Time `json:"at"`
	// AgeSeconds is how old they were when status answered.
	AgeSeconds float64 `json:"age_seconds"`
}

// SliceCost is one slice's size on its server (the adapter's optional
// size call).
type SliceCost struct {
	Service string `json:"service"`
	Adapter string `json:"adapter"`
	Bytes   int64  `json:"bytes"`
	// Shared is the part of Bytes whose blocks the filesystem shares with
	// another file (a reflink clone's source): counted once, there.
	Shared      int64  `json:"shared_bytes,omitempty"`
	Approximate bool   `json:"approximate,omitempty"`
	Note        string `json:"note,omitempty"`
	// Unsupported says the adapter has no size call.
	Unsupported bool   `json:"unsupported,omitempty"`
	Error       string `json:"error,omitempty"`
	// At is when the figure was taken.
	At time.Time `json:"at"`
}
