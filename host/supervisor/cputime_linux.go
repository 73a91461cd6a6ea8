package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// userHZ is the kernel's USER_HZ: /proc reports CPU time in these ticks
// (100 on every Linux architecture Go supports).
const userHZ = 100

func markedCPU(prefix string) (time.Duration, bool) {
	var ticks uint64
	for _, pid := range markedPrefix(prefix) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(b[end+1:])
		if len(f) < 13 { // f[11], f[12] are fields 14 and 15: utime, stime
			continue
		}
		u, _ := strconv.ParseUint(string(f[11]), 10, 64)
		s, _ := strconv.ParseUint(string(f[12]), 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / userHZ, true
}
