package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/adapter"
	"github.com/hashicorp/go-hclog"
)

// adaptersCmd lists the adapter binaries discovery finds.
type adaptersCmd struct{ cli.Adapters }

// adapterHost is the Host the CLI verbs use: discovery with the state
// directory's cache, warnings on stderr.
func adapterHost(g *globals) *adapter.Host {
	return adapter.New(adapter.Options{
		Home:   g.home,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "adapters", Level: hclog.Warn, Output: os.Stderr}),
	})
}

func (c *adaptersCmd) Run(g *globals) error {
	infos, err := adapterHost(g).List(g.ctx)
	if err != nil {
		return err
	}
	if infos == nil {
		infos = []adapter.Info{}
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(infos)
	}
	if len(infos) == 0 {
		fmt.Printf("no adapters found: install binky-adapter-<name> on PATH, in %s/adapters or in %s\n",
			g.home, strings.Join(adapter.DefaultSystemDirs(), ", "))
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	var broken []adapter.Info
	fmt.Fprintln(tw, "NAME\tALIASES\tVERSION\tTIERS\tCLONE\tPROTOCOL\tFROM\tBINARY")
	for _, i := range infos {
		aliases := strings.Join(i.Aliases, ",")
		if aliases == "" {
			aliases = "-"
		}
		tiers, clone, proto, version := strings.Join(i.Tiers, ","), yesNo(i.Clone), fmt.Sprint(i.Protocol), i.Version
		if i.Error != "" {
			tiers, clone, proto, version = "-", "-", "-", "-"
		}
		if version == "" {
			version = "-"
		}
		path := i.Path
		if i.ShadowedBy != "" {
			path += " (shadowed by " + i.ShadowedBy + ")"
		}
		if i.Error != "" {
			path += " (unusable: see below)"
			broken = append(broken, i)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, aliases, version, tiers, clone, proto, i.Origin, path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, i := range broken {
		fmt.Printf("\n%s: %s\n", i.Path, i.Error)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
