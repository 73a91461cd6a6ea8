//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func checkPlatform() error { return nil }

// ownGroup puts cmd in a process group of its own, so a Ctrl-C at the
// terminal reaches only this program, which then ends the whole group and
// cleans up in order.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// measureTree reads the memory of the roots and every process descended
// from them. PSS splits each shared page between the processes that map it,
// so the sum counts such a page once.
func measureTree(roots []int) (usage, error) {
	parents, err := processParents()
	if err != nil {
		return usage{}, err
	}
	children := map[int][]int{}
	for pid, ppid := range parents {
		children[ppid] = append(children[ppid], pid)
	}
	u := usage{wholeOK: true}
	objects := map[string]int64{} // dev:inode → resident KiB
	seen := map[int]bool{}
	todo := append([]int(nil), roots...)
	for len(todo) > 0 {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		todo = append(todo, children[pid]...)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if gone(err) {
			continue
		}
		if err != nil {
			return usage{}, fmt.Errorf("read the memory of pid %d: %w (run as root, or as the user owning the servers)", pid, err)
		}
		r := parseRollup(b)
		pss, ok := r["Pss"]
		if !ok {
			return usage{}, fmt.Errorf("read the memory of pid %d: no Pss line in /proc/%d/smaps_rollup", pid, pid)
		}
		shm, ok := r["Pss_Shmem"]
		if !ok {
			u.wholeOK = false
		}
		u.pss += pss
		u.pssShmem += shm
		u.procs++
		if u.wholeOK {
			if err := sharedObjects(pid, objects); err != nil && !gone(err) {
				u.wholeOK = false
			}
		}
	}
	for _, kib := range objects {
		u.shared += kib
	}
	return u, nil
}

// sharedObjects adds the shared memory objects pid maps to objects, with
// their resident size: the blocks allocated to the object behind
// /proc/<pid>/map_files/<range> (reading those links needs root).
func sharedObjects(pid int, objects map[string]int64) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	for _, m := range parseMaps(b) {
		if !m.sharedMemory() {
			continue
		}
		key := m.dev + ":" + m.inode
		if _, ok := objects[key]; ok {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(fmt.Sprintf("/proc/%d/map_files/%s", pid, m.addr), &st); err != nil {
			return err
		}
		objects[key] = st.Blocks * 512 / 1024
	}
	return nil
}

func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// mapping is one line of /proc/<pid>/maps.
type mapping struct {
	addr, perms, dev, inode, path string
}

// sharedMemory says whether m maps shared memory: a SysV segment, a shared
// anonymous mapping (/dev/zero), a POSIX segment in /dev/shm, or a memfd.
func (m mapping) sharedMemory() bool {
	if len(m.perms) < 4 || m.perms[3] != 's' {
		return false
	}
	for _, p := range []string{"/dev/zero", "/SYSV", "/dev/shm/", "/memfd:"} {
		if strings.HasPrefix(m.path, p) {
			return true
		}
	}
	return false
}

// parseMaps reads /proc/<pid>/maps: "addr perms offset dev inode [path]",
// where the path may hold spaces ("/dev/zero (deleted)").
func parseMaps(b []byte) []mapping {
	var out []mapping
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.Contains(f[0], "-") {
			continue
		}
		m := mapping{addr: f[0], perms: f[1], dev: f[3], inode: f[4]}
		if len(f) > 5 {
			m.path = strings.Join(f[5:], " ")
		}
		out = append(out, m)
	}
	return out
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) ([]int, error) {
	parents, err := processParents()
	if err != nil {
		return nil, err
	}
	var out []int
	for c, p := range parents {
		if p == pid {
			out = append(out, c)
		}
	}
	return out, nil
}

// processParents maps every pid in /proc to its parent.
func processParents() (map[int]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		if ppid, ok := parseStatPPid(b); ok {
			out[pid] = ppid
		}
	}
	return out, nil
}

// parseStatPPid reads the parent pid from /proc/<pid>/stat: "pid (comm)
// state ppid …", where comm may hold spaces and parentheses.
func parseStatPPid(b []byte) (int, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return 0, false
	}
	return ppid, true
}

// parseRollup reads the "Name: N kB" lines of /proc/<pid>/smaps_rollup.
func parseRollup(b []byte) map[string]int64 {
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		name, ok := strings.CutSuffix(f0(f), ":")
		if len(f) != 3 || f[2] != "kB" || !ok || name == "" {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n < 0 {
			continue
		}
		out[name] = n
	}
	return out
}

func f0(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// findPostmaster returns the pid of the postmaster serving dataDir: the first
// line of its postmaster.pid, or, where that file cannot be read, the one
// process whose command line still says -D dataDir (backends rename
// themselves, the postmaster does not).
func findPostmaster(dataDir string) (int, error) {
	if b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid")); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				return pid, nil
			}
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i, a := range args {
			if (a == "-D" && i+1 < len(args) && args[i+1] == dataDir) || a == "-D"+dataDir {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("find the postmaster of %s: no process runs with -D %s and its postmaster.pid cannot be read (run as root)", dataDir, dataDir)
}

// loadAvg is the 1, 5 and 15 minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// kernel is the running kernel's release.
func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// usedBytes is the used space of the filesystem holding path.
func usedBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, nil
}
