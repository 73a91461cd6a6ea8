package sdk

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

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
// cannot corrupt the reply. SIGINT or SIGTERM cancels the call's context.
//
// Started by go-plugin (the magic cookie of Handshake in its environment and
// no argument) it serves the same calls over net/rpc until the host closes
// it, logging to stderr.
//
// Anything else prints usage to stderr and exits 2. Run answers describe
// with rpc:true on both tiers, so the adapter itself need not say so. An
// adapter that is an io.Closer (a pool of admin connections) is closed
// before the process exits.
func Run(a Adapter) {
	code := runMain(a)
	if c, ok := a.(io.Closer); ok {
		c.Close()
	}
	os.Exit(code)
}

// runMain is Run without the exit, so tests can drive it in a child process.
func runMain(a Adapter) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	a = rpcCapable{a}
	switch {
	case len(args) == 2 && isCall(args[1]):
		return oneShot(ctx, a, args[1], stdin, stdout, stderr)
	case len(args) <= 1 && getenv(Handshake.MagicCookieKey) != "":
		return serveRPC(a, name, stderr, getenv)
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

// serveRPC hands the process to go-plugin. It returns when the host closes
// the plugin.
func serveRPC(a Adapter, name string, stderr io.Writer, getenv func(string) string) int {
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
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(a),
		Logger:          logger,
	})
	return 0
}

func usage(w io.Writer, name string) {
	fmt.Fprintf(w, `usage: %[1]s describe|provision|resolve|clone|destroy

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

func (r rpcCapable) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	resp, err := r.Adapter.Describe(ctx, req)
	if resp != nil {
		resp.RPC = true
	}
	return resp, err
}
