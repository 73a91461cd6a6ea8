package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

// client returns a client for the daemon, starting it when needed.
func (g *globals) client() (*api.Client, error) {
	return cli.Client(g.ctx, g.home)
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

// commitLabel is a verify run's commit as people read it: abc12345, or
// abc12345+dirty when the tree had uncommitted changes.
func commitLabel(commit string, dirty bool) string {
	c := shortCommit(commit)
	if c == "" {
		c = "no commit"
	}
	if dirty {
		c += "+dirty"
	}
	return c
}

// portsLabel is a world's port block, or "no ports" for one that has none.
func portsLabel(p [2]int) string {
	if p[0] == 0 && p[1] == 0 {
		return "no ports"
	}
	return fmt.Sprintf("ports %d-%d", p[0], p[1])
}

func shortCommit(c string) string {
	if len(c) > 8 {
		return c[:8]
	}
	return strings.TrimSpace(c)
}
