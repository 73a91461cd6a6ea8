package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WaitDelay is how long, after the local ssh exits, its output is still
// read (see exec.Cmd.WaitDelay).
const WaitDelay = 2 * time.Second

// Remote is a host as reached from one local BINKY_HOME by one binky:
// Wire and Version are the local binky's (api.WireVersion, cli.Version),
// checked against the host's hello on every session.
type Remote struct {
	Host    *Host
	Home    string // the local BINKY_HOME: the multiplexing sockets
	Wire    int
	Version string
	// TTY gives Exec's session a terminal on the host (ssh -tt), for a
	// verb that runs a command on one (run -t); the caller's stdin must be
	// a terminal. The host's stdout and stderr then both come on stdout.
	TTY bool
	// Batch never lets ssh ask anything (BatchMode=yes: no passphrase or
	// host-key prompt), for callers no one watches (shell completion).
	Batch bool
}

// BinkyArgv is the host's binky command line for words: the binky of
// hosts.toml (else "binky", found on the host's PATH) with --home when the
// host's BINKY_HOME is set.
func (r *Remote) BinkyArgv(words ...string) []string {
	bin := r.Host.Binky
	if bin == "" {
		bin = "binky"
	}
	argv := []string{bin}
	if r.Host.Home != "" {
		argv = append(argv, "--home", r.Host.Home)
	}
	return append(argv, words...)
}

// session starts ssh running the host's binky with words, and reads the
// hello. On success the caller owns cmd (started) and reads the rest of
// stdout from br.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	br     *bufio.Reader
	stderr *tailBuffer
}

func (r *Remote) start(ctx context.Context, stdin io.Reader, stderr io.Writer, words ...string) (*session, error) {
	var extra []string
	if r.Batch {
		extra = []string{"-o", "BatchMode=yes"}
	}
	argv, err := r.Host.command(r.Home, r.TTY && stdin != nil, extra, r.BinkyArgv(words...)...)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// A multiplexed session's stdio is passed to the master, which holds it
	// until the host's side ends: once ssh exits, stop waiting for it.
	cmd.WaitDelay = WaitDelay
	s := &session{cmd: cmd, stderr: &tailBuffer{max: 8 << 10}}
	if stdin == nil {
		if s.stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	} else {
		cmd.Stdin = stdin
	}
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, s.stderr)
	} else {
		cmd.Stderr = s.stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ssh: %w", err)
	}
	s.br = bufio.NewReaderSize(out, 4096)
	type hello struct {
		line string
		err  error
	}
	got := make(chan hello, 1)
	go func() {
		line, err := s.br.ReadString('\n')
		got <- hello{line, err}
	}()
	var h hello
	select {
	case h = <-got:
	case <-ctx.Done():
		s.kill()
		return nil, ctx.Err()
	}
	if h.err != nil {
		s.kill()
		return nil, r.sessionError(h.line, s.stderr.String(), cmd.ProcessState)
	}
	line := h.line
	if r.TTY {
		// On a terminal, what was typed before the hello is echoed ahead
		// of it.
		if i := strings.Index(line, helloPrefix); i > 0 {
			line = line[i:]
		}
	}
	wire, version, err := ParseHello(line)
	if err != nil {
		s.kill()
		return nil, r.sessionError(h.line, s.stderr.String(), cmd.ProcessState)
	}
	if wire != r.Wire {
		s.kill()
		return nil, &IncompatibleError{Host: r.Host.Name, LocalWire: r.Wire, RemoteWire: wire, Local: r.Version, Remote: version}
	}
	return s, nil
}

// sessionError explains a session that ended before a hello: ssh could
// not connect (its own message), or the host's binky is missing or too
// old to know Binky's remote verbs.
func (r *Remote) sessionError(first, stderr string, _ any) error {
	msg := strings.TrimSpace(stderr)
	if first != "" {
		msg = strings.TrimSpace(first + "\n" + msg)
	}
	switch {
	case msg == "":
		return fmt.Errorf("host %s: ssh %s ended without a word", r.Host.Name, r.Host.Destination())
	case strings.Contains(msg, "command not found") || strings.Contains(msg, "No such file or directory") && !strings.Contains(msg, "ssh:"):
		return fmt.Errorf("host %s: binky is not installed there (%s); install it, or set binky = \"/path/to/binky\" in hosts.toml", r.Host.Name, lastLine(msg))
	case strings.HasPrefix(msg, "ssh:") || strings.Contains(msg, "Permission denied") || strings.Contains(msg, "Host key verification failed"):
		return fmt.Errorf("host %s: ssh %s failed: %s", r.Host.Name, r.Host.Destination(), lastLine(msg))
	}
	return fmt.Errorf("host %s: its binky did not answer as a binky with remote support does (an older release?): %s", r.Host.Name, lastLine(msg))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (s *session) kill() {
	if s.stdin != nil {
		s.stdin.Close()
	}
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	s.cmd.Wait()
}

// Dial opens a connection to the host's daemon: ssh running the host's
// `binky system dial-stdio` (which starts the daemon there when none
// runs), its hello checked. It is api.Client's Dial.
func (r *Remote) Dial(ctx context.Context) (net.Conn, error) {
	s, err := r.start(ctx, nil, nil, "system", "dial-stdio")
	if err != nil {
		return nil, err
	}
	return &cmdConn{s: s, host: r.Host.Name}, nil
}

// Exec runs a binky verb on the host (words after the binky command line:
// the verb and its arguments) through `binky system exec`, in dir when it
// is not "", with the caller's stdin, stdout and stderr, and returns its
// exit status. An ssh failure is an error (ssh's own status is 255).
func (r *Remote) Exec(ctx context.Context, dir string, stdin io.Reader, stdout, stderr io.Writer, words ...string) (int, error) {
	args := []string{"system", "exec", "--wire", strconv.Itoa(r.Wire)}
	if dir != "" {
		args = append(args, "--dir", dir)
	}
	args = append(append(args, "--"), words...)
	if stdin == nil {
		stdin = bytes.NewReader(nil)
	}
	s, err := r.start(ctx, stdin, stderr, args...)
	if err != nil {
		return 1, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.cmd.Process.Kill()
		case <-done:
		}
	}()
	_, cerr := io.Copy(stdout, s.br)
	werr := s.cmd.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case werr == nil:
		if cerr != nil {
			return 1, cerr
		}
		return 0, nil
	case errors.As(werr, &ee) && ee.ExitCode() == 255 && sshFailed(s.stderr.String()):
		return 255, fmt.Errorf("host %s: the ssh connection ended: %s", r.Host.Name, lastLine(s.stderr.String()))
	case errors.As(werr, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), nil
	case ctx.Err() != nil:
		return 130, ctx.Err()
	}
	return 1, werr
}

// tailBuffer keeps the last max bytes written (ssh's stderr, for errors).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// cmdConn is a net.Conn over an ssh session's stdin and stdout (docker's
// commandconn, our own). Close ends the local ssh client; with
// multiplexing that closes one channel of the master, not the master.
type cmdConn struct {
	s    *session
	host string
	once sync.Once
}

// Read returns the host's last words on stderr (a daemon that would not
// start, the connection cut) in place of a bare EOF.
func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.s.br.Read(p)
	if err == io.EOF {
		if why := lastLine(c.s.stderr.String()); why != "" {
			return n, fmt.Errorf("host %s: %s", c.host, why)
		}
	}
	return n, err
}
func (c *cmdConn) Write(p []byte) (int, error) { return c.s.stdin.Write(p) }

func (c *cmdConn) Close() error {
	c.once.Do(c.s.kill)
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr              { return sshAddr("local") }
func (c *cmdConn) RemoteAddr() net.Addr             { return sshAddr(c.host) }
func (c *cmdConn) SetDeadline(time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(time.Time) error { return nil }

type sshAddr string

func (a sshAddr) Network() string { return "ssh" }
func (a sshAddr) String() string  { return string(a) }

// DialTCP opens a byte stream to addr as the host sees it (its loopback:
// "127.0.0.1:5432"), through the multiplexed connection: a direct-tcpip
// channel (ssh -W), no process on the host. It is what forwards a
// service's port from here.
func (r *Remote) DialTCP(ctx context.Context, addr string) (net.Conn, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil || strings.HasPrefix(addr, "-") {
		return nil, fmt.Errorf("dial %q on host %s: want host:port", addr, r.Host.Name)
	}
	if err := os.MkdirAll(ControlDir(r.Home), 0o700); err != nil {
		return nil, fmt.Errorf("make the ssh control directory: %w", err)
	}
	r.Host.ClearStaleControl(r.Home)
	argv := append(append([]string{}, r.Host.SSHOptions(r.Home)...), "-W", addr, "--", r.Host.Destination())
	cmd := exec.CommandContext(ctx, "ssh", argv...)
	cmd.WaitDelay = WaitDelay
	s := &session{cmd: cmd, stderr: &tailBuffer{max: 8 << 10}}
	cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ssh: %w", err)
	}
	s.br = bufio.NewReaderSize(out, 32<<10)
	return &cmdConn{s: s, host: r.Host.Name}, nil
}

// sshFailed tells ssh's own 255 (its last words name the connection) from
// a verb's: a command run on the host may exit 255 too.
func sshFailed(stderr string) bool {
	l := lastLine(stderr)
	for _, w := range []string{"ssh:", "Connection to", "closed by remote host", "client_loop", "mux_client", "Broken pipe", "Connection reset", "Connection closed"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return l == ""
}
