package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type goldenCmd struct {
	List    goldenListCmd    `cmd:"" default:"withargs" help:"One line per golden template: project, service, key, adapter, size, whether its worlds are copy-on-write, age, last use, worlds cloned from it."`
	Rebuild goldenRebuildCmd `cmd:"" help:"Drop a template (or every template of --project) so the next up builds it again from that worktree's inputs."`
	Drop    goldenDropCmd    `cmd:"" help:"Drop a template (or every template of --project) through its adapter and forget it."`
}

type goldenListCmd struct {
	Project string `help:"Only this project's templates."`
	JSON    bool   `help:"Print JSON."`
}

func (c *goldenListCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	var res api.GoldenResult
	if err := cl.Call(g.ctx, api.OpGolden, api.GoldenArgs{Action: api.GoldenList, Project: c.Project}, api.Handlers{}, &res); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("golden list: %w", err)}
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if len(res.Templates) == 0 {
		fmt.Println("no golden templates yet: `binky up` builds one for each adapter service with clone_from")
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tSERVICE/CLONE_FROM\tKEY\tADAPTER\tSIZE\tCOPY-ON-WRITE\tAGE\tLAST USE\tWORLDS\tTEMPLATE")
	for _, t := range res.Templates {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			dash(t.Project), dash(t.Service)+"/"+dash(t.CloneFrom), templateKey(t), t.Adapter, humanSize(t.Size), cowLabel(t),
			strings.TrimSuffix(since(t.Created), " ago"), since(t.LastUsed), dash(strings.Join(t.Worlds, ",")), t.Name+templateState(t))
	}
	return tw.Flush()
}

// goldenTarget is what rebuild and drop act on.
type goldenTarget struct {
	Template string `arg:"" optional:"" help:"Template name or key (binky golden list shows them)."`
	Project  string `help:"Every template of this project."`
	Quiet    bool   `short:"q" help:"No live progress."`
}

type goldenRebuildCmd struct{ goldenTarget }

func (c *goldenRebuildCmd) Run(g *globals) error { return c.act(g, api.GoldenRebuild) }

type goldenDropCmd struct{ goldenTarget }

func (c *goldenDropCmd) Run(g *globals) error { return c.act(g, api.GoldenDrop) }

func (c *goldenTarget) act(g *globals, action string) error {
	if (c.Template == "") == (c.Project == "") {
		return &exitError{Code: 2, Err: fmt.Errorf("golden %s: give a template name (binky golden list shows them) or --project, not both", action)}
	}
	cl, err := g.client()
	if err != nil {
		return err
	}
	wd, _ := os.Getwd()
	pp := &progressPrinter{w: os.Stderr, quiet: c.Quiet}
	var res api.GoldenResult
	args := api.GoldenArgs{Action: action, Template: c.Template, Project: c.Project, Dir: wd, Env: cli.CallerEnv()}
	callErr := cl.Call(g.ctx, api.OpGolden, args, api.Handlers{Progress: pp.show}, &res)
	if callErr != nil {
		// Several templates: each one's result rides in the error's detail.
		var ae *api.Error
		if !errors.As(callErr, &ae) || len(ae.Detail) == 0 || json.Unmarshal(ae.Detail, &res) != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("golden %s: %w", action, callErr)}
		}
	}
	for _, t := range res.Templates {
		if t.Error != "" {
			fmt.Printf("NOT dropped %s (%s/%s): %s\n", t.Name, t.Project, dash(t.CloneFrom), t.Error)
			continue
		}
		if action == api.GoldenRebuild {
			fmt.Printf("dropped %s; the next `binky up` (or reset) of a world with key %s builds it again\n", t.Name, templateKey(t))
		} else {
			fmt.Printf("dropped %s (%s/%s, key %s)\n", t.Name, t.Project, dash(t.CloneFrom), templateKey(t))
		}
	}
	if callErr != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("golden %s: %w", action, callErr)}
	}
	return nil
}

// cowLabel says whether the template's worlds share its blocks: yes, no
// (copied), "unverified" (asked for, not seen), "-" (not cloned yet).
func cowLabel(t api.GoldenTemplate) string {
	switch t.CopyOnWrite {
	case "copy-on-write":
		return "yes"
	case "copied":
		return "no"
	case "":
		return "-"
	}
	return t.CopyOnWrite
}

// templateState marks a template that is not ready to clone.
func templateState(t api.GoldenTemplate) string {
	switch t.State {
	case "":
		return ""
	case "building":
		return " (building, or a build cut short: binky golden drop removes it)"
	}
	return " (" + t.State + ": a failed build or clone left it; binky golden drop removes it)"
}

func templateKey(t api.GoldenTemplate) string {
	if t.Key == "" {
		return "unknown"
	}
	return t.Key
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// humanSize prints bytes in binary units; -1 (unknown) as "-".
func humanSize(n int64) string {
	switch {
	case n < 0:
		return "-"
	case n < 1<<10:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
}
