package main

import (
	"errors"
	"fmt"
	"github.com/binkyhq/binky/cmd/internal/cli"
	"os"
	"strings"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/client"
)

// adapterCmd groups the verbs that act on one adapter.
type adapterCmd struct {
	Test adapterTestCmd `cmd:"" help:"Run the conformance suite against a discovered adapter binary (any language)."`
}

// adapterTestCmd runs sdk/adaptertest against a discovered binary.
type adapterTestCmd struct{ cli.AdapterTest }

func (c *adapterTestCmd) Run(g *globals) error {
	config, err := parseConfig(c.Config)
	if err != nil {
		return &exitError{Code: 2, Err: err}
	}
	info, err := adapterHost(g).Locate(g.ctx, c.Name)
	if err != nil {
		if errors.Is(err, adapter.ErrNotFound) {
			return &exitError{Code: 2, Err: err}
		}
		return err
	}
	fmt.Printf("testing %s (%s)\n", c.Name, info.Path)
	opts := adaptertest.Options{
		Binary:   info.Path,
		Adapter:  c.Name,
		Config:   config,
		AdminURL: c.AdminURL,
		Project:  c.Project,
		Timeout:  c.Timeout,
		Env:      client.MinimalEnv(os.Environ()),
	}
	if c.Verbose {
		opts.Stderr = func(b []byte) {
			for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
				fmt.Fprintln(os.Stderr, "  stderr|", l)
			}
		}
	}
	failed, err := adaptertest.Run(g.ctx, opts, func(r adaptertest.Result) {
		if r.OK {
			fmt.Printf("ok   %s\n", r.Check)
			return
		}
		fmt.Printf("FAIL %s: %s\n", r.Check, r.Detail)
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{Code: 1, Err: fmt.Errorf("%s: %d conformance check(s) failed (rerun with -v to see its stderr)", c.Name, failed)}
	}
	fmt.Printf("%s passes the conformance suite\n", c.Name)
	return nil
}

// parseConfig turns KEY=VALUE flags into the config table. Values stay
// strings, except true, false and integers.
func parseConfig(kvs []string) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--config %q: want KEY=VALUE", kv)
		}
		out[k] = configValue(v)
	}
	return out, nil
}

func configValue(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	var n int64
	if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v {
		return n
	}
	return v
}
