package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

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
	opts, err := daemonOptions(g.home, os.Getenv, os.Stderr)
	if err != nil {
		ctl.RecordStartFailure(g.home, err)
		return err
	}
	// Go's profiler is binkyd's, not the daemon's: it serves while the
	// daemon runs (pprof.go, -tags pprof builds only).
	ctx, stop := context.WithCancel(g.ctx)
	defer stop()
	startPprof(ctx, os.Getenv("BINKY_PPROF"), hclog.New(&hclog.LoggerOptions{Name: "binkyd", Output: os.Stderr, Level: hclog.Info}))
	err = daemon.New(opts).Run(ctx)
	if err != nil {
		// Run fails only before it serves: leave the reason for the CLI or
		// MCP call that started this daemon (ctl.Start shows it).
		ctl.RecordStartFailure(g.home, err)
	}
	return err
}

// daemonOptions reads the daemon's environment, once, into its options:
// nothing in host/ reads these variables. They are
//
//	BINKY_PROXY_ADDR              the proxy's http listener, "off" for none (docs/proxy.md)
//	BINKY_PROXY_TLS_ADDR          its https listener
//	BINKY_TRIM_AFTER              how long the daemon stays quiet before it hands back memory ("20s"; "off" never)
//	BINKY_HEALTH_EVERY            how often a running service's probe repeats, e.g. "1s" (docs/supervision.md)
//	BINKY_NO_CGROUPS              set: world processes are tracked by process group and marker, never by cgroup
//	BINKY_TEST_PRESSURE           test hook: a JSON file admission reads its pressure from (docs/admission.md, "Testing")
//	BINKY_TEST_PRESSURE_INTERVAL  test hook: admission's sampling interval, e.g. "100ms"
//	BINKY_TEST_ADMISSION          test hook: "off" skips admission (the benchmark's baseline)
//
// A bad BINKY_TRIM_AFTER refuses the start; a bad BINKY_HEALTH_EVERY or
// BINKY_TEST_PRESSURE_INTERVAL is named on warn (daemon.log) and the
// default used. BINKY_HOME is the CLI's (globals); BINKY_PORT_LEASES is
// read by host/ports when the daemon opens its leases, at start;
// BINKY_PPROF, a loopback host:port serving Go's profiler in a binkyd built
// with -tags pprof, is read by daemonRunCmd, which serves it (pprof.go).
func daemonOptions(home string, getenv func(string) string, warn io.Writer) (daemon.Options, error) {
	trim, err := trimAfter(getenv("BINKY_TRIM_AFTER"))
	if err != nil {
		return daemon.Options{}, err
	}
	return daemon.Options{
		Home: home, Version: cli.Version(),
		ProxyAddr: getenv("BINKY_PROXY_ADDR"), ProxyTLSAddr: getenv("BINKY_PROXY_TLS_ADDR"),
		TrimAfter:        trim,
		HealthEvery:      positiveDuration("BINKY_HEALTH_EVERY", getenv, warn),
		NoCgroups:        getenv("BINKY_NO_CGROUPS") != "",
		PressureFile:     getenv("BINKY_TEST_PRESSURE"),
		PressureInterval: positiveDuration("BINKY_TEST_PRESSURE_INTERVAL", getenv, warn),
		AdmissionOff:     getenv("BINKY_TEST_ADMISSION") == "off",
	}, nil
}

// positiveDuration reads the variable name as a positive duration; 0 (the
// default) when it is unset, or not one, which is said on warn.
func positiveDuration(name string, getenv func(string) string, warn io.Writer) time.Duration {
	v := getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(warn, "binkyd: %s=%q is not a positive duration; using the default\n", name, v)
		return 0
	}
	return d
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
