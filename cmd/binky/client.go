package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ctl"
)

// client returns a client for the daemon, starting it when needed.
func (g *globals) client() (*api.Client, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return ctl.Ensure(g.ctx, g.home, exe)
}

// progressPrinter shows progress lines live on w (stderr).
type progressPrinter struct {
	w     io.Writer
	quiet bool
}

func (p *progressPrinter) show(pr api.Progress) {
	if p.quiet {
		return
	}
	who := ""
	if pr.Service != "" {
		who = " " + pr.Service
	}
	msg := ""
	if pr.Message != "" {
		msg = ": " + pr.Message
	}
	fmt.Fprintf(p.w, "  %6.1fs  %-10s%s%s\n", float64(pr.Elapsed)/1000, pr.Step, who, msg)
}

// refFromArg builds a WorldRef from a worktree-or-branch argument, with the
// caller's environment.
func refFromArg(name string) api.WorldRef {
	wd, _ := os.Getwd()
	return api.WorldRef{Name: name, Dir: wd, Env: callerEnv()}
}

func since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func shortCommit(c string) string {
	if len(c) > 8 {
		return c[:8]
	}
	return strings.TrimSpace(c)
}
