package main

import (
	"github.com/binkyhq/binky/cmd/internal/cli"
	"os"

	"github.com/hashicorp/go-hclog"

	binkymcp "github.com/binkyhq/binky/host/mcp"
)

type mcpCmd struct{ cli.Mcp }

func (c *mcpCmd) Run(g *globals) error {
	// Take stdout for the protocol before anything else can write to it.
	out, err := binkymcp.ProtocolOutput()
	if err != nil {
		return err
	}
	defer out.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "binky", Output: os.Stderr, Level: hclog.LevelFromString(c.LogLevel)})
	srv := binkymcp.New(binkymcp.Config{Home: g.home, Exe: exe, Dir: wd, Version: cli.Number(), Log: log})
	return srv.Serve(g.ctx, os.Stdin, out)
}
