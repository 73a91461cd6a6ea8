package admission

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// memInfo reads MemTotal and MemAvailable (kB) from /proc/meminfo.
func memInfo() (total, avail uint64, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() && found < 2 {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		var dst *uint64
		switch string(f[0]) {
		case "MemTotal:":
			dst = &total
		case "MemAvailable:":
			dst = &avail
		default:
			continue
		}
		n, perr := strconv.ParseUint(string(f[1]), 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("read /proc/meminfo: %s %q: %w", f[0], f[1], perr)
		}
		*dst = n * 1024
		found++
	}
	if total == 0 || found < 2 {
		return 0, 0, fmt.Errorf("read /proc/meminfo: no MemTotal or MemAvailable (kernel older than 3.14?)")
	}
	return total, avail, nil
}
