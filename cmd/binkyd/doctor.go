package main

import (
	"encoding/json"
	"fmt"
	"github.com/binkyhq/binky/cmd/internal/cli"
	"io"
	"os"
	"strings"

	"github.com/binkyhq/binky/host/doctor"
)

// doctorCmd checks the machine and BINKY_HOME (host/doctor). It changes
// nothing and never starts the daemon. Exit status: 0 when nothing is
// wrong (warnings allowed), 1 when a check failed.
type doctorCmd struct{ cli.Doctor }

func (c *doctorCmd) Run(g *globals) error {
	fs := doctor.Run(g.ctx, doctor.Env{Home: g.home, Version: cli.Version()})
	if err := c.print(os.Stdout, fs); err != nil {
		return err
	}
	if doctor.Failed(fs) {
		return &exitError{Code: 1}
	}
	return nil
}

func (c *doctorCmd) print(w io.Writer, fs []doctor.Finding) error {
	if c.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(fs)
	}
	var warns, fails int
	for _, f := range fs {
		switch f.Status {
		case doctor.StatusWarn:
			warns++
		case doctor.StatusFail:
			fails++
		default:
			if !c.All {
				continue
			}
		}
		fmt.Fprintf(w, "%-4s  %-13s %s\n", strings.ToUpper(string(f.Status)), f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      %-13s fix: %s\n", "", f.Fix)
		}
	}
	switch {
	case fails == 0 && warns == 0:
		fmt.Fprintf(w, "all %d checks passed (binky doctor --all shows them)\n", len(doctor.Names()))
	default:
		fmt.Fprintf(w, "%s, %s\n", plural(fails, "problem"), plural(warns, "warning"))
	}
	return nil
}
