package remote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// CheckTimeout bounds `ssh -O check` on an existing control socket: a
// master that does not answer within it is taken for dead.
const CheckTimeout = 5 * time.Second

// ClearStaleControl removes h's control socket under home when no live
// master answers on it (`ssh -O check` fails or does not answer within
// CheckTimeout): a master killed, stopped or stuck on a connection whose
// sshd went away. ssh would otherwise hang on it, or run without
// multiplexing ("ControlSocket … already exists"). Only a socket of ours
// is removed: owned by this user, in home's control directory. A master
// left running without its socket exits on its own (keepalives,
// ControlPersist).
func (h *Host) ClearStaleControl(home string) {
	if runtime.GOOS == "windows" {
		return
	}
	path := h.ControlPath(home)
	if filepath.Dir(path) != filepath.Clean(ControlDir(home)) {
		return
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || !ownedByUs(fi) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
	defer cancel()
	argv := append(append([]string{}, h.SSHOptions(home)...), "-O", "check", "--", h.Destination())
	cmd := exec.CommandContext(ctx, "ssh", argv...)
	cmd.WaitDelay = WaitDelay
	if cmd.Run() == nil {
		return
	}
	// Still the same socket (a new master may have taken the name since).
	if now, err := os.Lstat(path); err == nil && os.SameFile(fi, now) {
		os.Remove(path)
	}
}
