package main

import (
	"fmt"
	"os"
	"time"

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
	trim, err := trimAfter(os.Getenv("BINKY_TRIM_AFTER"))
	if err != nil {
		ctl.RecordStartFailure(g.home, err)
		return err
	}
	d := daemon.New(daemon.Options{Home: g.home, Version: cli.Version(), ProxyAddr: os.Getenv("BINKY_PROXY_ADDR"),
		ProxyTLSAddr: os.Getenv("BINKY_PROXY_TLS_ADDR"), TrimAfter: trim})
	err = d.Run(g.ctx)
	if err != nil {
		// Run fails only before it serves: leave the reason for the CLI or
		// MCP call that started this daemon (ctl.Start shows it).
		ctl.RecordStartFailure(g.home, err)
	}
	return err
}

// trimAfter reads BINKY_TRIM_AFTER: how long the daemon stays quiet before
// it hands back memory it no longer uses ("20s" by default, "off" never).
func trimAfter(v string) (time.Duration, error) {
	switch v {
	case "":
		return 0, nil
	case "off", "0":
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("BINKY_TRIM_AFTER=%q: want a duration such as 20s, or off", v)
	}
	return d, nil
}
