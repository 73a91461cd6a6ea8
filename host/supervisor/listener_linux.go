//go:build linux

package supervisor

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// cgroupOf is pid's cgroup v2 path ("/binky/…"), from the "0::" line of
// /proc/<pid>/cgroup; "" when it cannot be read or there is none.
func cgroupOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p
		}
	}
	return ""
}

// hasMarker reports whether pid is alive and its environment carries
// MarkerEnv=value exactly.
func hasMarker(pid int, value string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	needle := []byte(MarkerEnv + "=" + value + "\x00")
	if !bytes.HasPrefix(env, needle) && !bytes.Contains(env, append([]byte{0}, needle...)) {
		return false
	}
	st, err := readStat(pid)
	return err == nil && !st.dead()
}
