package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/cmd/internal/man"
)

// manCmd writes the manual pages (`make man`): binky.1 from this very
// grammar, binky.toml.5 from the key reference in docs/config.md.
type manCmd struct {
	Out    string `default:"man" help:"Directory the pages are written to." placeholder:"DIR"`
	Config string `name:"config" default:"docs/config.md" help:"The key reference binky.toml(5) is made from." placeholder:"FILE"`
}

func (c *manCmd) Run(k *kong.Context) error {
	md, err := os.ReadFile(c.Config)
	if err != nil {
		return fmt.Errorf("man: read the config reference: %w", err)
	}
	conf, err := man.Config(md, cli.Number())
	if err != nil {
		return fmt.Errorf("man: %s: %w", c.Config, err)
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	pages := map[string][]byte{
		"binky.1":      man.Binky(k.Model, cli.Number()),
		"binky.toml.5": conf,
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(c.Out, name), b, 0o644); err != nil {
			return fmt.Errorf("man: %w", err)
		}
	}
	return nil
}
