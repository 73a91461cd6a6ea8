//go:build linux

package world

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procsUsage sums the resident memory and CPU time of pids; a process gone
// meanwhile is skipped. n is how many were read.
func procsUsage(pids []int) (n int, rss int64, cpu time.Duration) {
	page := int64(os.Getpagesize())
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		u, err := parseProcUsage(b)
		if err != nil {
			continue
		}
		n++
		rss += u.rssPages * page
		cpu += u.cpu
	}
	return n, rss, cpu
}

// cgroupUsage reads a cgroup's charged memory and total CPU time.
func cgroupUsage(dir string) (mem int64, cpu time.Duration, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "memory.current"))
	if err == nil {
		mem, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	b, err = os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return mem, 0, false
	}
	cpu, ok = parseCPUStat(b)
	return mem, cpu, ok
}

// canTellProcesses: this platform reads processes' figures.
const canTellProcesses = true
