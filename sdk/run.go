package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// LogLevelEnv names the environment variable that sets the level of the
// adapter's own log on stderr while it serves RPC (trace, debug, info, warn,
// error; default info).
const LogLevelEnv = "BINKY_ADAPTER_LOG_LEVEL"

// Run is the whole main of an adapter binary:
//
//	func main() { sdk.Run(mine.New()) }
//
// With a call name as its only argument (describe, provision, resolve,
// clone, destroy) it reads one JSON request from stdin (at most MaxMessage
// bytes), answers it through Dispatch, writes exactly one JSON object and a
// newline to stdout and exits 0 when the reply is ok, 1 otherwise. While the
// call runs, os.Stdout points at stderr, so a stray print in adapter code
// cannot corrupt the reply. SIGTERM, SIGINT or SIGHUP cancels the call's
// context.
//
// Started by go-plugin (the magic cookie of Handshake in its environment and
// no argument) it serves the same calls over net/rpc, logging to stderr,
// until the host closes it, the process gets SIGTERM, SIGINT or SIGHUP, or
// the host process exits (checked every quarter second). Stopping cancels the
// context of the calls in flight and removes the go-plugin socket, which Run
// keeps in a directory of its own under PLUGIN_UNIX_SOCKET_DIR (default: the
// temp directory).
//
// With --version it prints the adapter's name, version, protocol and commit
// to stdout and exits 0 (see BuildVersion).
//
// Anything else prints usage to stderr and exits 2. Run answers describe
// with rpc:true on both tiers, so the adapter itself need not say so, and
// fills its version from BuildVersion when the adapter leaves it empty. An
// adapter that is an io.Closer (a pool of admin connections) is closed
// before the process exits (given two seconds to return).
func Run(a Adapter) {
	code := runMain(a)
	if c, ok := a.(io.Closer); ok {
		closeWithin(c, closeWait)
	}
	os.Exit(code)
}

// closeWait bounds an adapter's Close at exit, so a pool that waits for a
// stuck connection cannot keep the process alive.
const closeWait = 2 * time.Second

// closeWithin calls c.Close and gives up waiting after d.
func closeWithin(c io.Closer, d time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Close()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// runMain is Run without the exit, so tests can drive it in a child process.
func runMain(a Adapter) int {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	out := os.Stdout
	if len(os.Args) == 2 && isCall(os.Args[1]) {
		os.Stdout = os.Stderr
		defer func() { os.Stdout = out }()
	}
	return run(ctx, a, os.Args, os.Stdin, out, os.Stderr, os.Getenv)
}

// run picks the tier from args (argv, program name first) and the
// environment, and returns the exit status.
func run(ctx context.Context, a Adapter, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	name := "binky-adapter"
	if len(args) > 0 && args[0] != "" {
		name = filepath.Base(args[0])
	}
	a = withRPC(a)
	switch {
	case len(args) == 2 && isCall(args[1]):
		return oneShot(ctx, a, args[1], stdin, stdout, stderr)
	case len(args) <= 1 && getenv(Handshake.MagicCookieKey) != "":
		return serveRPC(ctx, a, name, stderr, getenv)
	case len(args) == 2 && args[1] == "--version":
		return printVersion(ctx, a, name, stdout)
	case len(args) >= 2 && !isCall(args[1]) && args[1] != "-h" && args[1] != "--help" && args[1] != "help":
		fmt.Fprintf(stderr, "%s: unknown call %q\n\n", name, args[1])
	case len(args) > 2:
		fmt.Fprintf(stderr, "%s: %s takes no arguments (the request is read from stdin)\n\n", name, args[1])
	}
	usage(stderr, name)
	return 2
}

func isCall(s string) bool { return slices.Contains(Calls, s) }

// oneShot answers one call: one JSON object in on stdin, one out on stdout.
func oneShot(ctx context.Context, a Adapter, call string, stdin io.Reader, stdout, stderr io.Writer) int {
	var reply []byte
	body, err := io.ReadAll(io.LimitReader(stdin, MaxMessage+1))
	switch {
	case err != nil:
		reply = EncodeError(Errorf(CodeInvalid, "read the %s request from stdin: %v", call, err))
	case len(body) > MaxMessage:
		reply = EncodeError(Errorf(CodeInvalid, "the %s request on stdin is larger than %d bytes, the protocol's limit", call, MaxMessage))
	default:
		reply = Dispatch(ctx, a, call, body)
	}
	if _, err := stdout.Write(append(reply, '\n')); err != nil {
		fmt.Fprintf(stderr, "write the %s reply to stdout: %v\n", call, err)
		return 1
	}
	if DecodeReply(reply, nil) != nil {
		return 1
	}
	return 0
}

// HostPidEnv carries the pid of the host that starts an RPC adapter, so
// the adapter knows its host even if it was re-parented before it looked.
const HostPidEnv = "BINKY_ADAPTER_HOST_PID"

// errHostGone stops an RPC adapter whose host process exited.
var errHostGone = errors.New("the host process exited")

// serveRPC hands the process to go-plugin. It returns when the host closes
// the plugin, when ctx ends (a signal) or when the host process exits.
func serveRPC(ctx context.Context, a Adapter, name string, stderr io.Writer, getenv func(string) string) int {
	ppid := os.Getppid() // first, so that a host dying while we start is noticed
	if host, err := strconv.Atoi(getenv(HostPidEnv)); err == nil && host > 0 {
		// The host said who it is: a parent that is not it means the host
		// died before this line (and we were re-parented).
		ppid = host
	}
	if getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		fmt.Fprintf(stderr, "%s: %s is set but does not hold the cookie of protocol %d; "+
			"this binary serves RPC only to a binky that speaks its protocol (unset %s to use it by hand)\n",
			name, Handshake.MagicCookieKey, Protocol, Handshake.MagicCookieKey)
		return 2
	}
	level := hclog.LevelFromString(getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     stderr,
		JSONFormat: true,
	})
	// go-plugin removes its unix socket only when the host closes the
	// plugin. In a directory of our own, every way out removes it.
	base := getenv(plugin.EnvUnixSocketDir)
	dir, err := os.MkdirTemp(base, SocketDirPrefix)
	if err != nil {
		fmt.Fprintf(stderr, "%s: create a directory for the RPC socket: %v; set %s to a writable directory\n", name, err, plugin.EnvUnixSocketDir)
		return 1
	}
	defer func() {
		_ = os.RemoveAll(dir)
		if base != "" && strings.HasPrefix(filepath.Base(base), SocketDirPrefix) {
			_ = os.Remove(base) // the host's directory for us; only when empty
		}
	}()
	if err := os.Setenv(plugin.EnvUnixSocketDir, dir); err != nil {
		fmt.Fprintf(stderr, "%s: set %s: %v\n", name, plugin.EnvUnixSocketDir, err)
		return 1
	}
	// Once the host is gone our stderr is a broken pipe; a log line must
	// not kill the process before it has cleaned up.
	ignoreBrokenPipe()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchParent(ctx, ppid, func() { cancel(errHostGone) })

	served := make(chan struct{})
	go func() {
		defer close(served)
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: Handshake,
			Plugins:         pluginSet(ctx, a),
			Logger:          logger,
		})
	}()
	select {
	case <-served:
	case <-ctx.Done():
		logger.Info("stopping", "reason", context.Cause(ctx).Error())
	}
	return 0
}

func usage(w io.Writer, name string) {
	fmt.Fprintf(w, `usage: %[1]s describe|provision|resolve|clone|destroy|size
       %[1]s --version

%[1]s is a Binky adapter (protocol %[2]d). Binky runs it; you rarely need to.
By hand: write one JSON request to stdin, read one JSON reply from stdout.
The exit status is 0 only when the reply says "ok":true.

  echo '{"protocol":%[2]d}' | %[1]s describe
  echo '{"protocol":%[2]d,"slice":"demo_main","config":{}}' | %[1]s resolve

Started by binky over go-plugin (%[3]s set, no arguments) it serves the
same calls over RPC. See docs/adapter-protocol.md.
`, name, Protocol, Handshake.MagicCookieKey)
}

// rpcCapable makes describe say rpc:true: every binary built on Run serves
// both tiers.
type rpcCapable struct {
	Adapter
}

// rpcCapableSizer is rpcCapable of an adapter with the optional size
// call, which the wrapping must not hide.
type rpcCapableSizer struct {
	rpcCapable
	s Sizer
}

func (r rpcCapableSizer) Size(ctx context.Context, req *SizeRequest) (*SizeResponse, error) {
	return r.s.Size(ctx, req)
}

// withRPC wraps a in rpcCapable, keeping its optional calls.
func withRPC(a Adapter) Adapter {
	if s, ok := a.(Sizer); ok {
		return rpcCapableSizer{rpcCapable{a}, s}
	}
	return rpcCapable{a}
}

func (r rpcCapable) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	resp, err := r.Adapter.Describe(ctx, req)
	if resp != nil {
		resp.RPC = true
		if resp.Version == "" {
			resp.Version, _ = BuildVersion()
		}
	}
	return resp, err
}
