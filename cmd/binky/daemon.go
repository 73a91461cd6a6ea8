package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ctl"
)

// daemonCmd groups the daemon's verbs.
type daemonCmd struct {
	Start  daemonStartCmd  `cmd:"" help:"Start the daemon for this BINKY_HOME (detached)."`
	Stop   daemonStopCmd   `cmd:"" help:"Stop the daemon; worlds keep running."`
	Status daemonStatusCmd `cmd:"" help:"Say whether the daemon runs, with its pid."`
	Run    daemonRunCmd    `cmd:"" hidden:"" help:"Run the daemon in the foreground (binkyd's; binky hands it off)."`
}

type daemonStartCmd struct{}

func (c *daemonStartCmd) Run(g *globals) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	p, err := ctl.Start(g.ctx, g.home, exe)
	if err != nil {
		return err
	}
	fmt.Printf("daemon running (pid %d, home %s)\n", p.Pid, p.Home)
	return nil
}

type daemonStopCmd struct {
	// wait bounds how long stop waits for the daemon to exit (tests);
	// ctl.StopWait when zero.
	wait time.Duration `kong:"-"`
}

// Run says "daemon stopped" only once the daemon has exited: its socket no
// longer answers and its lock on daemon.pid is released. A daemon that has
// not exited within the wait is an error naming its pid (exit status 1).
func (c *daemonStopCmd) Run(g *globals) error {
	wait := c.wait
	if wait <= 0 {
		wait = ctl.StopWait
	}
	live := liveWorlds(g)
	was, err := ctl.StopWithin(g.ctx, g.home, wait)
	if err != nil {
		return err
	}
	if !was {
		fmt.Println("no daemon was running")
		return nil
	}
	switch {
	case live < 0:
		fmt.Println("daemon stopped (worlds keep running)")
	case live == 0:
		fmt.Println("daemon stopped (no world had a process running)")
	case live == 1:
		fmt.Println("daemon stopped (1 world keeps running; the next daemon adopts it)")
	default:
		fmt.Printf("daemon stopped (%d worlds keep running; the next daemon adopts them)\n", live)
	}
	return nil
}

// liveWorlds asks a running daemon (never starting one) how many worlds
// have a process running, which a stop leaves running; -1 when it does
// not say within two seconds.
func liveWorlds(g *globals) int {
	ctx, cancel := context.WithTimeout(g.ctx, 2*time.Second)
	defer cancel()
	var t api.StatusTable
	c := &api.Client{Home: g.home}
	if err := c.Call(ctx, api.OpStatus, api.StatusArgs{Table: true}, api.Handlers{}, &t); err != nil {
		return -1
	}
	n := 0
	for _, w := range t.Worlds {
		if slices.ContainsFunc(w.Services, func(s api.Service) bool { return s.Pid > 0 }) {
			n++
		}
	}
	return n
}

type daemonStatusCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c *daemonStatusCmd) Run(g *globals) error {
	p, err := ctl.Ping(g.ctx, g.home)
	if err != nil {
		if c.JSON {
			json.NewEncoder(os.Stdout).Encode(map[string]any{"running": false, "home": g.home})
		} else {
			fmt.Printf("no daemon running for %s\n", g.home)
		}
		return &exitError{Code: 1}
	}
	if c.JSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"running": true, "pid": p.Pid, "home": p.Home, "version": p.Version, "started": p.Started, "proxy_port": p.ProxyPort, "proxy_tls_port": p.TLSPort})
	}
	fmt.Printf("daemon running: pid %d, up %s, home %s, version %s\n", p.Pid, time.Since(p.Started).Round(time.Second), p.Home, p.Version)
	return nil
}

type daemonRunCmd struct{}
