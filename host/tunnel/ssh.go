package tunnel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/remote"
)

// Runner runs one ssh command to its end and returns what it printed
// (stdout and stderr). The daemon's is ExecRunner; tests give a fake.
type Runner interface {
	Run(ctx context.Context, argv []string) (string, error)
}

// ExecRunner runs argv as a process. Its output goes through a file, not
// a pipe: the master ssh forks (-f) and its child keeps the descriptors,
// which would hold a pipe open for the master's life.
type ExecRunner struct{}

// Run runs argv and returns its output.
func (ExecRunner) Run(ctx context.Context, argv []string) (string, error) {
	f, err := os.CreateTemp("", "binky-ssh-*.out")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = f, f
	setDetached(cmd)
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	return strings.TrimSpace(string(out)), err
}

// controlPath is the tunnel's own multiplexing socket for h: beside the
// CLI's (remote.Host.ControlPath), its name's first letter changed, so a
// verb's master that times out or is killed never takes the forwards with
// it, and the tunnel's lives exactly as long as the host has worlds here.
func controlPath(h *remote.Host, home string) string {
	p := h.ControlPath(home)
	dir, name := filepath.Split(p)
	return dir + "r" + name[1:]
}

// sshOptions are h's ssh options with the tunnel's own multiplexing
// settings and keepalives instead of the CLI's (ssh takes the first value of an option,
// so they are left out, not overridden).
func sshOptions(h *remote.Host, home string) []string {
	var out []string
	opts := h.SSHOptions(home)
	for i := 0; i < len(opts); i++ {
		if opts[i] == "-o" && i+1 < len(opts) && (strings.HasPrefix(opts[i+1], "Control") || strings.HasPrefix(opts[i+1], "ServerAlive")) {
			i++
			continue
		}
		out = append(out, opts[i])
	}
	return append(out, "-o", "ControlPath="+controlPath(h, home))
}

// masterArgv starts the tunnel's master: authenticated, then in the
// background (-f) with no command (-N), alive until told to exit. Keepalives
// find a dead peer within ~15 s; BatchMode never asks for a password.
func masterArgv(h *remote.Host, home string) []string {
	argv := append([]string{"ssh"}, sshOptions(h, home)...)
	return append(argv,
		"-o", "ControlMaster=yes", "-o", "ControlPersist=no",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
		"-o", "ExitOnForwardFailure=yes", "-o", "BatchMode=yes",
		"-N", "-f", "--", h.Destination())
}

// controlArgv asks the master something: check, exit, or forward/cancel
// with spec.
func controlArgv(h *remote.Host, home, op string, spec ...string) []string {
	argv := append([]string{"ssh"}, sshOptions(h, home)...)
	argv = append(argv, "-O", op)
	argv = append(argv, spec...)
	return append(argv, "--", h.Destination())
}

// forwardSpec is the -L of one forward: only loopback on both ends.
func forwardSpec(local, remotePort int) []string {
	return []string{"-L", fmt.Sprintf("127.0.0.1:%d:127.0.0.1:%d", local, remotePort)}
}

// MasterPid reads the pid out of `ssh -O check`'s answer ("Master running
// (pid=1234)"); 0 when there is none.
func MasterPid(out string) int {
	_, rest, ok := strings.Cut(out, "pid=")
	if !ok {
		return 0
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:end])
	return n
}

// removeStale removes the socket of a master that died (killed, its
// connection cut): ssh will not bind over it, and would run without
// multiplexing.
func removeStale(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove the stale control socket %s: %w", path, err)
	}
	return nil
}
