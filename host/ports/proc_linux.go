//go:build linux

package ports

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStart is pid's start time (field 22 of /proc/<pid>/stat); 0 when it
// cannot be read.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	st, err := parseStatStart(b)
	if err != nil {
		return 0
	}
	return st
}

// procAlive reports whether pid is the process that started at start and
// runs as user owner. A process this user cannot see (hidepid) is not.
func procAlive(pid int, start uint64, owner string) bool {
	if pid <= 0 || start == 0 {
		return false
	}
	fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return false
	}
	if o, _ := statOwner("", fi); o != owner {
		return false
	}
	return procStart(pid) == start
}

// lockHolder names the process holding the flock on f, from /proc/locks
// by the file's device and inode, and its user; 0, "" when not listed.
func lockHolder(f *os.File) (int, string) {
	fi, err := f.Stat()
	if err != nil {
		return 0, ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, ""
	}
	text, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, ""
	}
	dev := uint64(st.Dev)
	pid := parseLocksHolder(text, unix.Major(dev), unix.Minor(dev), st.Ino)
	if pid <= 0 {
		return 0, ""
	}
	owner := ""
	if pfi, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		owner, _ = statOwner("", pfi)
	}
	return pid, owner
}

// unprivilegedPortStart is the lowest port a user other than root may
// bind (net.ipv4.ip_unprivileged_port_start, 1024 unless changed).
func unprivilegedPortStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
	if err != nil {
		return 1024
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 1024
	}
	return n
}
