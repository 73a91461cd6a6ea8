package ports

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AddrHolder names who holds a listen address the proxy could not bind
// (proxy.Options.Holder): another binky home's daemon by its home id and
// directory, else the program (Owner), else "" (not visible to this user).
func AddrHolder(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return ""
	}
	pid := OwnerPid(port)
	if pid == 0 {
		return ""
	}
	if home := daemonHome(pid); home != "" {
		id := "of unknown id"
		if b, err := os.ReadFile(filepath.Join(home, HomeIDFile)); err == nil {
			id = strings.TrimSpace(string(b))
		}
		return fmt.Sprintf("the proxy of binky home %s (%s), pid %d", id, home, pid)
	}
	return Owner(port)
}

// daemonHome is the BINKY_HOME of pid when pid is a binky daemon whose
// environment this user may read, else "". Only Linux tells.
func daemonHome(pid int) string {
	cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !bytes.Contains(cmd, []byte("daemon\x00run")) {
		return ""
	}
	var home, userHome string
	args := bytes.Split(cmd, []byte{0})
	for i, a := range args {
		if v, ok := bytes.CutPrefix(a, []byte("--home=")); ok {
			home = string(v)
		} else if string(a) == "--home" && i+1 < len(args) {
			home = string(args[i+1])
		}
	}
	env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("BINKY_HOME=")); ok && home == "" {
			home = string(v)
		}
		if v, ok := bytes.CutPrefix(kv, []byte("HOME=")); ok {
			userHome = string(v)
		}
	}
	if home == "" && userHome != "" {
		home = filepath.Join(userHome, ".binky")
	}
	if home == "" {
		return ""
	}
	if !filepath.IsAbs(home) {
		// Relative to the daemon's own directory.
		if cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd")); err == nil {
			home = filepath.Join(cwd, home)
		}
	}
	return home
}
