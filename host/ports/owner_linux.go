//go:build linux

package ports

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Owner says who listens on TCP port: "pid 1234 (python3 -m http.server)",
// from /proc/net/tcp{,6} and the processes' descriptors. It returns "" when
// the holder is not visible to this user (another user's process, a
// container) or the port is not held.
func Owner(port int) string {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return ""
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return ""
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return fmt.Sprintf("pid %d (%s)", pid, commandLine(pid))
			}
		}
	}
	return ""
}

// OwnerPid is the pid of Owner, or 0.
func OwnerPid(port int) int {
	s := Owner(port)
	var pid int
	if _, err := fmt.Sscanf(s, "pid %d", &pid); err != nil {
		return 0
	}
	return pid
}

// listeningInodes are the socket inodes listening on port, over IPv4 and
// IPv6.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], want) {
				continue
			}
			out[fields[9]] = true
		}
	}
	return out
}

// commandLine is a process's argv joined by spaces, cut to 80 bytes.
func commandLine(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
