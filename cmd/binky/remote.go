package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// Driving another machine (docs/remote.md). `binky --host NAME <verb> …`
// (or BINKY_HOST=NAME) runs the verb by the host's own binky, over the
// user's ssh with one multiplexed connection per host: the host's
// `binky system exec -- <verb> …` says hello (its wire version, checked
// here: an incompatible host is refused naming both binkys), then runs the
// verb there, in the host's environment, with this terminal's stdin,
// stdout and stderr and its exit status. Programs (host check, and the
// proxy's routes) reach the host's daemon through the api client's Dial
// seam instead: `binky system dial-stdio`, bridged over the same road.

// localVerbs never go to a host: they manage the road itself, or this
// machine's shell.
var localVerbs = map[string]bool{
	"host": true, "system": true, "completion": true, "__complete": true, "__man": true,
	"--help": true, "-h": true, "--version": true, "help": true,
	// hook runs here (the agent tool's worktree is local) and brings the
	// worktree's world up or down on the host (hook.go).
	"hook": true,
}

// hostFlag finds --host NAME (or --host=NAME) in args before a "--",
// returning args without it; else BINKY_HOST. A remote.Any ("any") asks
// the hosts in turn (up only).
func hostFlag(args []string, getenv func(string) string) (host string, rest []string, set bool) {
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--host" && i+1 < len(args) {
			host, set = args[i+1], true
			i++
			continue
		}
		if v, ok := strings.CutPrefix(a, "--host="); ok {
			host, set = v, true
			continue
		}
		rest = append(rest, a)
	}
	if !set {
		if v := getenv("BINKY_HOST"); v != "" {
			return v, args, true
		}
	}
	return host, rest, set
}

// takeFlag removes --name VALUE (or --name=VALUE) from args before "--".
func takeFlag(args []string, name string) (value string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return value, append(rest, args[i:]...)
		}
		if a == "--"+name && i+1 < len(args) {
			value = args[i+1]
			i++
			continue
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			value = v
			continue
		}
		rest = append(rest, a)
	}
	return value, rest
}

// verbOf is the first word of args that is not a global flag.
func verbOf(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--home":
			i++
		case strings.HasPrefix(a, "--home="):
		case a == "--help" || a == "-h" || a == "--version":
			return a
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// remoteRun runs args on a host when --host or BINKY_HOST names one, and
// the host side of `system exec`; handled is false otherwise.
func remoteRun(args []string) (code int, handled bool) {
	if code, ok := systemExec(args); ok {
		return code, true
	}
	name, rest, set := hostFlag(args, os.Getenv)
	verb := verbOf(rest)
	if !set || localVerbs[verb] || verb == "" {
		if set && name == "" {
			fmt.Fprintln(os.Stderr, "binky: --host needs a host name (binky host list)")
			return 2, true
		}
		return 0, false
	}
	home, rest := takeFlag(rest, "home")
	if home == "" {
		home = os.Getenv("BINKY_HOME")
	}
	home = cli.HomeDir(home)
	ctx, stop := cli.Signals()
	defer stop()
	if verb == "up" {
		return remoteUp(ctx, home, name, rest), true
	}
	if name == remote.Any {
		fmt.Fprintln(os.Stderr, "binky: --host any places a new world (binky --host any up BRANCH); other verbs name the host (binky status --host NAME)")
		return 2, true
	}
	r, err := openRemote(home, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return 1, true
	}
	if verb == "env" {
		return remoteEnv(ctx, home, r, rest), true
	}
	// run -t: the host's binky needs a terminal for the command, so the
	// session gets one (ssh -tt) when this stdin is one; else the host's
	// binky says what -t needs, as here.
	r.TTY = verb == "run" && wantsTTY(rest) && term.IsTerminal(int(os.Stdin.Fd()))
	code, err = r.Exec(ctx, "", os.Stdin, os.Stdout, os.Stderr, rest...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
	}
	if changesWorlds[verb] && err == nil {
		reachAfter(ctx, home, name)
	}
	return code, true
}

// wantsTTY tells whether run's command line (args before "--") asks for a
// terminal: -t, --tty, or -t among short flags (-it).
func wantsTTY(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--tty":
			return true
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 't') && strings.Trim(a[1:], "qit") == "":
			return true
		}
	}
	return false
}

// openRemote is the host name of home's hosts.toml, as this binky
// reaches it.
func openRemote(home, name string) (*remote.Remote, error) {
	f, err := remote.Load(home)
	if err != nil {
		return nil, err
	}
	h, err := f.Lookup(name)
	if err != nil {
		return nil, err
	}
	return &remote.Remote{Host: h, Home: home, Wire: api.WireVersion, Version: cli.Version()}, nil
}

// remoteClient is an api client for the host's daemon, through ssh and
// the host's `binky system dial-stdio`.
func remoteClient(r *remote.Remote) *api.Client {
	return &api.Client{Home: r.Host.Home, Dial: r.Dial, Where: "host " + r.Host.Name}
}

// systemExec is the host's side of `binky --host`: `binky system exec
// [--dir DIR] -- VERB ARGS…` says hello, then runs the verb as this binky
// would (BINKY_HOST ignored: the verb is for this machine).
func systemExec(args []string) (int, bool) {
	i := 0
	var pre []string
	for i < len(args) && (args[i] == "--home" || strings.HasPrefix(args[i], "--home=")) {
		pre = append(pre, args[i])
		if args[i] == "--home" && i+1 < len(args) {
			pre = append(pre, args[i+1])
			i++
		}
		i++
	}
	if len(args) < i+2 || args[i] != "system" || args[i+1] != "exec" {
		return 0, false
	}
	rest := args[i+2:]
	dir, rest := takeFlag(rest, "dir")
	wire, rest := takeFlag(rest, "wire")
	if len(rest) == 0 || rest[0] != "--" {
		fmt.Fprintln(os.Stderr, "binky: usage: binky system exec [--dir DIR] [--wire N] -- VERB [ARGS…] (what binky --host runs on the host)")
		return 2, true
	}
	os.Stdout.WriteString(remote.Hello(api.WireVersion, cli.Version()))
	// The caller's wire version: another one is refused here too, so the
	// verb never runs for a binky that would misread it.
	if wire != "" && wire != strconv.Itoa(api.WireVersion) {
		fmt.Fprintf(os.Stderr, "binky: this host's %s speaks wire %d; the caller speaks wire %s: install the same binky release on both machines\n", cli.Version(), api.WireVersion, wire)
		return 3, true
	}
	os.Unsetenv("BINKY_HOST")
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "binky: on this host: %v\n", err)
			return 1, true
		}
	}
	args = append(pre, rest[1:]...)
	// Verbs that read the raw command line (run) see the one they run.
	os.Args = append([]string{os.Args[0]}, args...)
	return run(args), true
}

// systemCmd is `binky system …`: the host's side of the road.
type systemCmd struct {
	DialStdio dialStdioCmd `cmd:"" name:"dial-stdio" help:"Bridge stdin and stdout to this home's daemon (starting it when needed): what binky --host runs over ssh."`
	Exec      execStubCmd  `cmd:"" help:"Run a binky verb after a hello line: binky system exec [--dir DIR] -- VERB [ARGS…] (what binky --host runs over ssh)."`
}

// execStubCmd documents system exec, which remoteRun handles before kong.
type execStubCmd struct {
	Dir  string   `help:"Run in this directory." placeholder:"DIR"`
	Wire int      `help:"The caller's wire version: another one is refused before the verb runs."`
	Args []string `arg:"" optional:"" passthrough:""`
}

func (c *execStubCmd) Run(*globals) error {
	return &exitError{Code: 2, Err: fmt.Errorf("usage: binky system exec [--dir DIR] -- VERB [ARGS…]")}
}

type dialStdioCmd struct{}

// Run says hello, then copies stdin to the daemon's socket and the socket
// to stdout until either side ends. The daemon's own peer check applies:
// the connection is this (the SSH) user's.
func (c *dialStdioCmd) Run(g *globals) error {
	// The hello first: the caller then knows this binky speaks its wire,
	// and takes a failure below (on stderr) as the daemon's, not ours.
	if _, err := os.Stdout.WriteString(remote.Hello(api.WireVersion, cli.Version())); err != nil {
		return err
	}
	if _, err := cli.Client(g.ctx, g.home); err != nil {
		return err
	}
	conn, err := dialHome(g.ctx, g.home)
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() {
		io.Copy(conn, os.Stdin)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	done := make(chan struct{})
	go func() {
		io.Copy(os.Stdout, conn)
		close(done)
	}()
	select {
	case <-done:
	case <-g.ctx.Done():
	}
	// The daemon answered and hung up (or the caller went): the other
	// copy may be blocked on stdin, which the caller closes with ssh.
	return nil
}

// dialHome connects to home's daemon socket (named pipe on Windows).
func dialHome(ctx context.Context, home string) (net.Conn, error) {
	return api.DialHome(ctx, home)
}
