package main

import (
	"os"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/ctl"
	"github.com/binkyhq/binky/host/daemon"
)

// daemonCmd holds the one daemon verb binkyd runs; start, stop and status
// are binky's (they only talk to the socket).
type daemonCmd struct {
	Run daemonRunCmd `cmd:"" help:"Run the daemon in the foreground."`
}

type daemonRunCmd struct{}

func (c *daemonRunCmd) Run(g *globals) error {
	d := daemon.New(daemon.Options{Home: g.home, Version: cli.Version(), ProxyAddr: os.Getenv("BINKY_PROXY_ADDR"), ProxyTLSAddr: os.Getenv("BINKY_PROXY_TLS_ADDR")})
	err := d.Run(g.ctx)
	if err != nil {
		// Run fails only before it serves: leave the reason for the CLI or
		// MCP call that started this daemon (ctl.Start shows it).
		ctl.RecordStartFailure(g.home, err)
	}
	return err
}
