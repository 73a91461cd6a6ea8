package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/dotenv"
)

type envCmd struct {
	Worktree string `arg:"" help:"Worktree name or branch."`
	JSON     bool   `help:"Print JSON (the default)."`
	Dotenv   bool   `help:"Print KEY='value' lines safe to eval, with BINKY_<SERVICE>_URL names."`
}

func (c *envCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	var res api.EnvResult
	if err := cl.Call(g.ctx, api.OpEnv, api.EnvArgs{WorldRef: refFromArg(c.Worktree)}, api.Handlers{}, &res); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("env: %w", err)}
	}
	if c.Dotenv {
		fmt.Print(dotenv.Format(api.EnvVars(res)))
		return nil
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if res.Env == nil {
		res.Env = map[string]string{}
	}
	return enc.Encode(res.Env)
}
