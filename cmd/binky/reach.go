package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// Reaching a host's worlds from here (docs/remote.md, "what runs where"):
// after a verb that changes them, the CLI tells this machine's daemon to
// attach the host; the daemon (host/tunnel) holds the forwards and the
// proxy routes. `binky --host NAME env` rewrites the host's coordinates
// to the ones that answer here; --remote keeps the host's own.

// changesWorlds are the verbs after which the local daemon reads the
// host's worlds again: their routes and forwards follow.
var changesWorlds = map[string]bool{
	"up": true, "down": true, "remove": true, "restart": true, "reset": true,
	"stop": true, "start": true, "reserve": true,
}

// attachHost asks the local daemon to reach host's worlds, and returns
// what it holds for them.
func attachHost(ctx context.Context, home, host string) (*api.AttachResult, error) {
	cl, err := cli.Client(ctx, home)
	if err != nil {
		return nil, err
	}
	var res api.AttachResult
	if err := cl.Call(ctx, api.OpAttach, api.AttachArgs{Host: host}, api.Handlers{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// reachAfter is attachHost after a verb that changed host's worlds: a
// failure is a warning, the verb's own outcome stands.
func reachAfter(ctx context.Context, home, host string) {
	res, err := attachHost(ctx, home, host)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "binky: warning: host %s's worlds are not reached from this machine: %v\n", host, err)
	case res.Error != "" && len(res.Worlds) > 0:
		fmt.Fprintf(os.Stderr, "binky: warning: reaching host %s from here: %s (retrying in the background)\n", host, res.Error)
	}
}

// remoteEnv is `binky --host NAME env …`: the host's env, its addresses
// made ones that answer on this machine (proxied names through the local
// proxy, loopback ports through the local daemon's forwards), unless
// --remote asks for the host's own.
func remoteEnv(ctx context.Context, home string, r *remote.Remote, args []string) int {
	keep := false
	rest := args[:0:0]
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--remote" {
			keep = true
			continue
		}
		rest = append(rest, a)
	}
	if keep {
		code, err := r.Exec(ctx, "", os.Stdin, os.Stdout, os.Stderr, rest...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "binky:", err)
		}
		return code
	}
	res, err := attachHost(ctx, home, r.Host.Name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "binky: env: reach host %s from here: %v (--remote prints the host's own addresses)\n", r.Host.Name, err)
		return 1
	}
	var out bytes.Buffer
	code, err := r.Exec(ctx, "", os.Stdin, &out, os.Stderr, rest...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return code
	}
	fwd := map[int]int{}
	for k, v := range res.Forwards {
		if p, err := strconv.Atoi(k); err == nil {
			fwd[p] = v
		}
	}
	text, ok := remote.Rewrite(out.String(), fwd, res.ProxyPort, res.TLSPort)
	os.Stdout.WriteString(text)
	if !ok {
		why := res.Error
		if why == "" {
			why = "the world is not up there"
		}
		fmt.Fprintf(os.Stderr, "binky: warning: some addresses of host %s have no forward here (%s); they are the host's own (--remote)\n", r.Host.Name, why)
	}
	return code
}
