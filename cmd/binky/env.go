package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/dotenv"
)

type envCmd struct {
	Worktree string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project  string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	JSON     bool   `help:"Print JSON (the default): service → URL."`
	Dotenv   bool   `help:"Print KEY='value' lines safe to eval: BINKY_<SERVICE>_URL, and BINKY_<SERVICE>_DIRECT_URL (http://127.0.0.1:<port>) for a service with a port."`
	Direct   bool   `help:"Give each service with a port as http://127.0.0.1:<port> instead of its proxied *.localhost URL (for clients that cannot resolve *.localhost)."`
}

func (c *envCmd) Run(g *globals) error {
	var res api.EnvResult
	args := api.EnvArgs{WorldRef: cli.WorldRef(c.Worktree, c.Project)}
	if err := cli.Ask(g.ctx, g.home, func(cl *api.Client) error {
		res = api.EnvResult{}
		if err := cl.Call(g.ctx, api.OpEnv, args, api.Handlers{}, &res); err != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("env: %w", err)}
		}
		return nil
	}); err != nil {
		return err
	}
	if w := envWarning(res); w != "" {
		fmt.Fprintln(os.Stderr, "binky: warning:", w)
	}
	for _, name := range res.Order {
		if why, ok := res.NotRunning[name]; ok {
			fmt.Fprintf(os.Stderr, "binky: %s is not running (%s): no address for it\n", name, why)
		}
		if why, ok := res.Waiting[name]; ok {
			fmt.Fprintf(os.Stderr, "binky: %s is not running yet: it %s through the proxy (its URL; --direct has no address for it until then)\n", name, why)
		}
	}
	if res.StableName != "" && !c.Dotenv {
		fmt.Fprintf(os.Stderr, "binky: %s/%s holds the stable name %s\n", res.Project, res.Worktree, res.StableName)
	}
	if res.Env == nil {
		res.Env = map[string]string{}
	}
	if c.Direct {
		for name, v := range res.Direct {
			if _, ok := res.Env[name]; ok {
				res.Env[name] = v
			}
		}
	}
	if c.Dotenv {
		fmt.Print(dotenv.Format(api.EnvVars(res)))
		return nil
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res.Env)
}

// envWarning is what env says on stderr about a world that is not up: its
// coordinates are fixed, but nothing answers at them yet.
func envWarning(r api.EnvResult) string {
	if r.State == "" || r.State.Serving() {
		return ""
	}
	return fmt.Sprintf("%s/%s is %s: nothing answers at these coordinates until `binky up %s`", r.Project, r.Worktree, r.State, r.Worktree)
}
