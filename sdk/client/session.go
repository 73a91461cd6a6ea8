package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// defaultStart bounds the go-plugin handshake when ctx has no deadline.
const defaultStart = time.Minute

// closeGrace is how long Close lets the adapter exit by itself (go-plugin's
// Control.Quit) before its process group is killed.
const closeGrace = 3 * time.Second

// RPCMinPort and RPCMaxPort bound the loopback TCP port an RPC adapter
// listens on where go-plugin has no Unix socket (Windows; go-plugin takes
// the first free port from the bottom). go-plugin's own default,
// 10000–25000, overlaps binky's default world range, 20000–29999
// (host/ports), so an adapter could hold a stopped world's port when the
// world comes back up. This range sits at the top of the registered ports,
// just below Windows' dynamic range 49152–65535, from which Windows takes
// the local ports of outgoing connections (and Hyper-V and WSL reserve
// their excluded ranges), so those never crowd it out; it is clear of
// Kubernetes' NodePort range 30000–32767 (Docker Desktop publishes it on
// localhost) and of the 42000–43000 binky doctor proposes for a project.
// Each running adapter takes one port; one that is held is skipped. Unix
// ignores the range.
const (
	RPCMinPort = 48000
	RPCMaxPort = 49151
)

// ErrSessionClosed is returned by a call on a session that was closed, or
// killed after a call timed out.
var ErrSessionClosed = errors.New("adapter RPC session is closed")

// Session is one adapter process started by go-plugin, serving calls over
// net/rpc until Close. It is safe for concurrent use.
type Session struct {
	bin    *Binary
	pc     *plugin.Client
	cmd    *exec.Cmd
	job    *job // Windows: the adapter's kill-on-close job (nil elsewhere)
	rpc    *sdk.RPCClient
	stderr *tail
	// sockDir holds the adapter's go-plugin socket; removed once the
	// adapter is dead, so even a killed adapter leaves no socket behind.
	sockDir string

	mu     sync.Mutex
	closed error // non-nil once the session is unusable
}

// StartRPC starts the binary in the RPC tier. ctx's deadline bounds the
// handshake (default one minute); each call has its own deadline. Text the binary prints on stdout before the
// handshake makes this fail with the first 200 bytes of it.
func (b *Binary) StartRPC(ctx context.Context) (*Session, error) {
	label := b.Label() + " rpc"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: not started: %w", label, err)
	}
	sockDir, err := os.MkdirTemp("", sdk.SocketDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: create a directory for its socket: %w (is TMPDIR writable?)", label, err)
	}
	cmd := exec.Command(b.Path)
	// The host's pid: an adapter whose host died before it could read its
	// own parent pid (under a kill storm, the daemon killed mid-start) sees
	// at once that its parent is not the host that started it.
	cmd.Env = append(b.env(), plugin.EnvUnixSocketDir+"="+sockDir, sdk.HostPidEnv+"="+strconv.Itoa(os.Getpid()))
	ownGroup(cmd)
	stderr := newTail(StderrLimit)
	startTimeout := defaultStart
	if d, ok := ctx.Deadline(); ok {
		startTimeout = max(time.Until(d), time.Millisecond)
	}
	logger := b.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginSet(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Logger:           quietPluginLogger{Logger: logger, quiet: filepath.Base(b.Path)},
		Stderr:           stderr,
		SyncStdout:       stderr,
		SyncStderr:       stderr,
		SkipHostEnv:      true,
		StartTimeout:     startTimeout,
		// Only this client may talk to the adapter: each side makes a
		// one-time certificate and refuses a connection without the
		// other's. It matters on Windows, where go-plugin listens on
		// loopback TCP that any local process can reach; on Unix the
		// socket sits in a 0700 directory already, and the same mTLS runs
		// there too, so Linux tests cover the path Windows takes.
		AutoMTLS: true,
		// go-plugin appends PLUGIN_MIN_PORT/PLUGIN_MAX_PORT after cmd.Env,
		// so the range is set here, not in the environment.
		MinPort: RPCMinPort,
		MaxPort: RPCMaxPort,
	}
	// On Windows the adapter runs in a kill-on-close job of its own: what
	// it starts dies with it, and it dies with this process.
	j := newJob()
	startIn(cfg, cmd, j, sockDir)
	pc := plugin.NewClient(cfg)
	s := &Session{bin: b, pc: pc, cmd: cmd, job: j, stderr: stderr, sockDir: sockDir}

	// go-plugin holds the process while it waits for the handshake, so the
	// start is bounded by StartTimeout (ctx's deadline), not by cancelling.
	var raw any
	proto, err := pc.Client()
	if err == nil {
		raw, err = proto.Dispense(sdk.PluginName)
	}
	if err != nil {
		s.kill()
		b.handStderr(stderr.take())
		return nil, fmt.Errorf("%s: start: %w", label, handshakeError(err))
	}
	rc, ok := raw.(*sdk.RPCClient)
	if !ok {
		s.kill()
		return nil, fmt.Errorf("%s: start: plugin %q dispensed %T, not *sdk.RPCClient", label, sdk.PluginName, raw)
	}
	s.rpc = rc
	return s, nil
}

// handshakeError makes go-plugin's "Unrecognized remote plugin message"
// readable: the adapter printed something on stdout before its handshake
// line. The text is cut to SnippetLen bytes.
func handshakeError(err error) error {
	const marker = "Unrecognized remote plugin message: "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return err
	}
	line := msg[i+len(marker):]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	if line == "" {
		return errors.New("the adapter exited or closed stdout without the go-plugin handshake (does describe wrongly say rpc:true?)")
	}
	return fmt.Errorf("the adapter printed text on stdout before the go-plugin handshake (stdout is reserved for the protocol; log to stderr); first %d bytes: %s",
		SnippetLen, Snippet([]byte(line)))
}

// Label names the adapter in errors.
func (s *Session) Label() string { return s.bin.Label() }

// Call runs one call over RPC: req is encoded as the request and the reply
// decoded into resp, exactly as Binary.Call does.
func (s *Session) Call(ctx context.Context, call string, req, resp any) error {
	return callJSON(ctx, s, call, req, resp)
}

// CallRaw sends one JSON request and returns the one JSON reply. When ctx
// ends first, the adapter's process group is killed and the session closed.
func (s *Session) CallRaw(ctx context.Context, call string, request []byte) ([]byte, error) {
	label := s.Label() + " " + call
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed != nil {
		return nil, fmt.Errorf("%s: %w", label, closed)
	}
	if len(request) > maxMessage {
		return nil, fmt.Errorf("%s: request is %d bytes; the limit is %d (1 MiB)", label, len(request), maxMessage)
	}
	start := time.Now()
	reply, err := s.rpc.Call(ctx, call, request)
	defer func() { s.bin.handStderr(s.stderr.take()) }()
	if err != nil {
		if ctx.Err() != nil {
			s.shut(fmt.Errorf("%w: a call timed out", ErrSessionClosed))
			return nil, fmt.Errorf("%s: %s; its process group was killed: %w", label, deadlineText(ctx, start), context.Cause(ctx))
		}
		if s.pc.Exited() {
			s.shut(fmt.Errorf("%w: the adapter exited", ErrSessionClosed))
			return nil, fmt.Errorf("%s: the adapter process exited during the call: %w", label, err)
		}
		return nil, fmt.Errorf("%s: rpc: %w", label, err)
	}
	r, perr := CheckReply(reply)
	if perr != nil {
		return nil, fmt.Errorf("%s: %v; first %d bytes: %s", label, perr, SnippetLen, Snippet(reply))
	}
	return r, nil
}

// shut marks the session unusable and kills its process group.
func (s *Session) shut(why error) {
	s.mu.Lock()
	if s.closed == nil {
		s.closed = why
	}
	s.mu.Unlock()
	s.kill()
}

// kill takes the adapter's whole process group (job) down and reaps it.
func (s *Session) kill() {
	killGroup(s.cmd)
	s.job.kill()
	s.pc.Kill()
	s.job.close()
	_ = os.RemoveAll(s.sockDir)
}

// Close ends the session: the adapter is asked to exit, its group killed
// after a short grace, and its last stderr handed on. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed == nil {
		s.closed = ErrSessionClosed
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pc.Kill()
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		killGroup(s.cmd)
		s.job.kill()
		<-done
	}
	// Children the adapter left in its group (job).
	killGroup(s.cmd)
	s.job.kill()
	s.job.close()
	_ = os.RemoveAll(s.sockDir)
	s.bin.handStderr(s.stderr.take())
	return nil
}

// quietPluginLogger hands go-plugin a logger that drops the plugin's stderr
// lines (go-plugin logs them under a logger named after the binary): they
// may hold secrets and reach the caller through Binary.Stderr instead.
type quietPluginLogger struct {
	hclog.Logger
	quiet string
}

func (l quietPluginLogger) Named(name string) hclog.Logger {
	if name == l.quiet {
		return hclog.NewNullLogger()
	}
	return quietPluginLogger{Logger: l.Logger.Named(name), quiet: l.quiet}
}

func (l quietPluginLogger) ResetNamed(name string) hclog.Logger {
	if name == l.quiet {
		return hclog.NewNullLogger()
	}
	return quietPluginLogger{Logger: l.Logger.ResetNamed(name), quiet: l.quiet}
}

func (l quietPluginLogger) With(args ...any) hclog.Logger {
	return quietPluginLogger{Logger: l.Logger.With(args...), quiet: l.quiet}
}

var (
	_ Caller = (*Binary)(nil)
	_ Caller = (*Session)(nil)
)
