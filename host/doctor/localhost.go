package doctor

import (
	"context"
	"net"
	"os/exec"
	"strings"
)

// probeName is a *.localhost name no one registers: it resolves only when
// the resolver maps the whole zone to loopback.
const probeName = "binky-doctor-probe.localhost"

// checkLocalhost resolves a *.localhost name with Go's resolver (what
// binky, Go programs and most agents use) and with the system's (getent,
// i.e. nsswitch, what browsers and libc programs use).
func checkLocalhost(ctx context.Context, e *Env) []Finding {
	goAddrs, goErr := net.DefaultResolver.LookupHost(ctx, probeName)
	sys, sysKnown := systemResolves(ctx, e.GOOS)
	var out []Finding
	switch {
	case goErr == nil && loopbackOnly(goAddrs):
		out = append(out, ok("Go's resolver maps *.localhost to loopback (%s)", strings.Join(goAddrs, ", ")))
	case goErr == nil:
		out = append(out, fail(localhostFix(e.GOOS), "Go's resolver maps %s to %s, which is not loopback", probeName, strings.Join(goAddrs, ", ")))
	default:
		out = append(out, warn(localhostFix(e.GOOS),
			"Go's resolver cannot resolve *.localhost (%v): Go programs and agents reach services by the 127.0.0.1:<port> addresses `binky env --json` prints, not by URL (docs/proxy.md)", goErr))
	}
	switch {
	case !sysKnown:
	case sys:
		out = append(out, ok("the system resolver maps *.localhost to loopback"))
	default:
		out = append(out, warn(localhostFix(e.GOOS), "the system resolver cannot resolve *.localhost: browsers may still (they map it themselves), other programs cannot"))
	}
	return out
}

func loopbackOnly(addrs []string) bool {
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(addrs) > 0
}

// systemResolves asks the OS's own resolver; known is false where doctor
// has no read-only way to ask.
func systemResolves(ctx context.Context, goos string) (resolves, known bool) {
	var cmd *exec.Cmd
	switch goos {
	case "linux", "freebsd", "openbsd", "netbsd":
		cmd = exec.CommandContext(ctx, "getent", "hosts", probeName)
	case "darwin":
		cmd = exec.CommandContext(ctx, "dscacheutil", "-q", "host", "-a", "name", probeName)
	default:
		return false, false
	}
	out, err := cmd.Output()
	if err != nil {
		if _, isExit := err.(*exec.ExitError); isExit {
			return false, true // getent exits 2 for "not found"
		}
		return false, false
	}
	for _, f := range strings.Fields(string(out)) {
		if ip := net.ParseIP(f); ip != nil {
			return ip.IsLoopback(), true
		}
	}
	return false, true
}

// localhostFix is the one thing to do on this OS so that *.localhost
// resolves.
func localhostFix(goos string) string {
	switch goos {
	case "linux":
		return "sudo apt-get install libnss-myhostname  (or enable systemd-resolved; or add each name to /etc/hosts: 127.0.0.1 web.<worktree>.<project>.localhost)"
	case "darwin":
		return "add the names to /etc/hosts (127.0.0.1 web.<worktree>.<project>.localhost), or use the 127.0.0.1:<port> addresses binky env prints"
	case "windows":
		return `add the names to C:\Windows\System32\drivers\etc\hosts, or use the 127.0.0.1:<port> addresses binky env prints`
	}
	return "add the names to /etc/hosts, or use the 127.0.0.1:<port> addresses binky env prints"
}
