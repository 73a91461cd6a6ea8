package world

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// every Linux the kernel's userspace ABI promises.
const userHZ = 100

var errProcFormat = errors.New("unexpected /proc stat format")

// procUsage is what the cost of a world reads of one process.
type procUsage struct {
	rssPages int64
	cpu      time.Duration // user + system
}

// parseProcUsage reads utime, stime (fields 14 and 15) and rss (field 24,
// in pages) from the text of /proc/<pid>/stat, counting fields from the
// last ')' (the command name may hold spaces and parentheses).
func parseProcUsage(b []byte) (procUsage, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return procUsage{}, errProcFormat
	}
	rest := bytes.Fields(b[end+1:])
	// rest[0] is field 3: field n is rest[n-3].
	if len(rest) < 22 {
		return procUsage{}, errProcFormat
	}
	var v [3]int64
	for i, f := range []int{14, 15, 24} {
		n, err := strconv.ParseInt(string(rest[f-3]), 10, 64)
		if err != nil || n < 0 {
			return procUsage{}, errProcFormat
		}
		v[i] = n
	}
	ticks := v[0] + v[1]
	if ticks > int64(time.Duration(1<<62)/(time.Second/userHZ)) {
		return procUsage{}, errProcFormat
	}
	return procUsage{rssPages: v[2], cpu: time.Duration(ticks) * (time.Second / userHZ)}, nil
}

// parseCPUStat reads usage_usec from a cgroup v2 cpu.stat.
func parseCPUStat(b []byte) (time.Duration, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if !ok || string(k) != "usage_usec" {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil || n < 0 || n > int64(time.Duration(1<<62)/time.Microsecond) {
			return 0, false
		}
		return time.Duration(n) * time.Microsecond, true
	}
	return 0, false
}
