package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// ControlPersist is how long an idle multiplexing master stays after its
// last session: verbs within it cost one round trip, not a handshake.
const ControlPersist = "10m"

// maxControlPath bounds the ControlPath ssh is given. A unix socket path
// holds at most 104 bytes on macOS (108 on Linux), and ssh binds a
// temporary name (the path plus a dot and 16 random characters) before
// renaming it, so the path itself must stay well under that.
const maxControlPath = 80

// ControlDir is where home keeps its multiplexing sockets: $home/ssh, or,
// when that path is too long for a socket, a directory of the user's own
// under the system's temporary directory.
func ControlDir(home string) string {
	dir := filepath.Join(home, "ssh")
	if len(dir)+1+controlNameLen <= maxControlPath {
		return dir
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(os.TempDir(), "binky-ssh-"+strconv.Itoa(os.Getuid())+"-"+hex.EncodeToString(sum[:4]))
}

const controlNameLen = 16

// ControlPath is the multiplexing socket for h: a hash of everything that
// decides which connection ssh makes, so two hosts never share a master
// and a changed entry does not reuse the old one.
func (h *Host) ControlPath(home string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{h.SSH, h.Identity, h.SSHConfig}, "\x00")))
	return filepath.Join(ControlDir(home), hex.EncodeToString(sum[:])[:controlNameLen])
}

// Destination is what ssh is given as the destination: user@addr, without
// the port (passed with -p).
func (h *Host) Destination() string {
	addr := h.Addr
	if addr == "" {
		addr = h.SSH
	}
	if h.User != "" {
		return h.User + "@" + addr
	}
	return addr
}

// SSHOptions are the ssh client's options for h (everything before the
// destination), home being the local BINKY_HOME that keeps the
// multiplexing socket. The ssh config and identity are the user's; -T asks
// for no terminal, so the session is a clean byte stream.
func (h *Host) SSHOptions(home string) []string {
	return h.sshOptions(home, false)
}

// sshOptions are SSHOptions, or with tty the options of a session that
// has a terminal on the host (ssh -tt: a pty there, this terminal raw
// here, its size followed): what `run -t` needs. Such a session's
// "Shared connection to … closed." is not said (LogLevel=ERROR keeps
// ssh's errors).
func (h *Host) sshOptions(home string, tty bool) []string {
	var args []string
	if h.SSHConfig != "" {
		args = append(args, "-F", h.SSHConfig)
	}
	if h.Identity != "" {
		args = append(args, "-i", h.Identity)
	}
	if h.Port != 0 {
		args = append(args, "-p", strconv.Itoa(h.Port))
	}
	if tty {
		args = append(args, "-tt", "-o", "LogLevel=ERROR")
	} else {
		args = append(args, "-T")
	}
	if runtime.GOOS == "windows" {
		return args // Windows' OpenSSH has no connection multiplexing
	}
	return append(args,
		"-o", "ControlMaster=auto",
		"-o", "ControlPath="+h.ControlPath(home),
		"-o", "ControlPersist="+ControlPersist,
		// A master whose host went away (sshd restarted, the network
		// gone) notices within a minute and exits, ending the verbs
		// multiplexed on it instead of leaving them waiting.
		"-o", "ServerAliveInterval="+ServerAliveInterval,
		"-o", "ServerAliveCountMax="+ServerAliveCountMax,
		"-o", "ConnectTimeout="+ConnectTimeout,
	)
}

// The keepalives and connect timeout of every ssh binky runs for a verb:
// a dead peer is found after ServerAliveInterval×ServerAliveCountMax
// seconds; a host that does not answer at all, after ConnectTimeout.
const (
	ServerAliveInterval = "15"
	ServerAliveCountMax = "3"
	ConnectTimeout      = "20"
)

// Command is the argv (ssh first) that runs remote on h: remote's words
// are quoted for the host's POSIX shell, which is how ssh hands a command
// over. The multiplexing directory is made (0700) first.
func (h *Host) Command(home string, remote ...string) ([]string, error) {
	return h.command(home, false, nil, remote...)
}

// command is Command, with a terminal on the host when tty is set and
// the ssh options extra after the others.
func (h *Host) command(home string, tty bool, extra []string, remote ...string) ([]string, error) {
	if err := os.MkdirAll(ControlDir(home), 0o700); err != nil {
		return nil, fmt.Errorf("make the ssh control directory: %w", err)
	}
	h.ClearStaleControl(home)
	argv := append([]string{"ssh"}, h.sshOptions(home, tty)...)
	argv = append(append(argv, extra...), "--", h.Destination())
	if len(remote) > 0 {
		argv = append(argv, ShellJoin(remote))
	}
	return argv, nil
}

// SSHCommand is the command line GIT_SSH_COMMAND gets for h: ssh and its
// options, quoted for sh (git adds the destination and command).
func (h *Host) SSHCommand(home string) string {
	return ShellJoin(append([]string{"ssh"}, h.SSHOptions(home)...))
}

// ShellJoin quotes words for a POSIX shell, leaving plainly safe words
// bare.
func ShellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@,+%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
