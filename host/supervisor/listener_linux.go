//go:build linux

package supervisor

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
	env, err := readEnviron(pid)
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

// readEnviron reads pid's environment. A process caught inside its exec
// reads empty for a moment: its parent has been told the exec went
// through (os/exec's Start has returned) before the kernel has laid out
// the new program's environment. An empty read of a live process is
// read again, with waits doubling from 50 µs, for about 50 ms at most,
// before it is taken for a process without an environment.
func readEnviron(pid int) ([]byte, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/environ"
	wait := 50 * time.Microsecond
	for i := 0; ; i++ {
		env, err := os.ReadFile(path)
		if err != nil || len(env) > 0 || i == 10 {
			return env, err
		}
		if st, err := readStat(pid); err != nil || st.dead() {
			return env, nil
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// maxOwnPids bounds how many processes ownPids lists: past it the
// machine-wide scan is as cheap.
const maxOwnPids = 256

// ownPids lists the processes of run r that a listener is looked for in
// first: the process, its descendants (from /proc/<pid>/task/<tid>/children,
// which is most of its process group), and the members of the cgroup it
// was started in. A holder that is none of these (a process that left the
// tree and the cgroup) is found by the machine-wide scan that follows.
func ownPids(r *run) []int {
	if r.pid <= 0 {
		return nil
	}
	seen := map[int]bool{r.pid: true}
	out := []int{r.pid}
	for i := 0; i < len(out) && len(out) < maxOwnPids; i++ {
		for _, c := range childrenOf(out[i]) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	if r.cgroup != "" {
		for _, p := range cgroupProcs(r.cgroup) {
			if !seen[p] && len(out) < maxOwnPids {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// childrenOf is pid's children, from the children file of each of its
// threads (a kernel without CONFIG_PROC_CHILDREN has none: no children).
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		out = append(out, pidList(b)...)
	}
	return out
}

// cgroupProcs is the members of the cgroup v2 at path (as cgroupOf names
// it), from its cgroup.procs.
func cgroupProcs(path string) []int {
	mnt, err := cgroup2Mount()
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(mnt, path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	return pidList(b)
}

// pidList reads the pids in b, separated by spaces or newlines.
func pidList(b []byte) []int {
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil && p > 0 {
			out = append(out, p)
		}
	}
	return out
}
