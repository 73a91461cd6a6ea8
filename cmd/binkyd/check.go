package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/binkyhq/binky/cmd/internal/cli"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/warm"
	"github.com/binkyhq/binky/host/worktree"
)

// checkCmd validates a binky.toml and flags footguns. Exit status: 0 when
// there are no errors (warnings allowed), 1 with errors (an env_file that
// is not a regular file, is too large or does not parse is one), 2 when
// the file cannot be read (a FIFO, device or directory is not read), is
// too large or too deeply nested, or is not TOML, or when a signal
// interrupts the check.
type checkCmd struct {
	cli.Check

	// known lists the adapter names discovery answers to (nil: check
	// knows only config.ProductAdapters).
	known func(context.Context) []string `kong:"-"`
}

// discoveredAdapters is every name and alias the adapters discovery finds
// answer to.
func discoveredAdapters(g *globals) func(context.Context) []string {
	return func(ctx context.Context) []string {
		infos, err := adapterHost(g).List(ctx)
		if err != nil {
			return nil
		}
		var names []string
		for _, i := range infos {
			names = append(names, i.Name)
			names = append(names, i.Aliases...)
		}
		return names
	}
}

func (c *checkCmd) Run(g *globals) error {
	c.known = discoveredAdapters(g)
	return c.run(g.ctx, os.Stdout, os.Stderr)
}

// run stops as soon as ctx ends (SIGINT or SIGTERM), even mid-parse.
func (c *checkCmd) run(ctx context.Context, stdout, stderr io.Writer) error {
	path, err := c.file()
	if err != nil {
		if c.JSON {
			where := c.Path
			if where == "" {
				where = "."
			}
			writeDiagnostics(stdout, config.Diagnostics{{File: where, Severity: config.SeverityError, Message: err.Error()}})
		}
		return &exitError{Code: 2, Err: fmt.Errorf("check: %w", err)}
	}
	cfg, ds, err := config.LoadContext(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{Code: 2, Err: fmt.Errorf("check %s: interrupted", path)}
		}
		if c.JSON {
			d := config.Diagnostic{File: path, Severity: config.SeverityError, Message: err.Error()}
			var le *config.LoadError
			if errors.As(err, &le) {
				d = le.Diagnostic()
			}
			writeDiagnostics(stdout, config.Diagnostics{d})
		}
		return &exitError{Code: 2, Err: fmt.Errorf("check: %w", err)}
	}
	if src, rerr := config.ReadFile(path); rerr == nil && cfg != nil {
		var known []string
		if c.known != nil {
			known = c.known(ctx)
		}
		ds = append(ds, config.CheckAdapterNames(path, string(src), cfg, known)...)
		ds = append(ds, config.CheckEnvFiles(path, envFileRoots(ctx, filepath.Dir(path)), cfg)...)
		ds = append(ds, warm.Check(ctx, path, path, cfg)...)
		if c.Target == "windows" && runtime.GOOS != "windows" { // on Windows, Load reported them
			ds = append(ds, config.CheckWindows(path, string(src), cfg)...)
		}
		if eph, err := ports.EphemeralRange(ctx); err == nil {
			ds = append(ds, config.CheckPortRange(path, cfg, ports.DefaultRange(), eph)...)
		}
		slices.SortStableFunc(ds, func(a, b config.Diagnostic) int { return a.Line - b.Line })
	}
	if c.JSON {
		writeDiagnostics(stdout, ds)
	} else {
		for _, d := range ds {
			fmt.Fprintln(stdout, d.String())
		}
		errs, warns := ds.Count()
		switch {
		case errs == 0 && warns == 0:
			fmt.Fprintf(stderr, "%s: ok\n", path)
		default:
			fmt.Fprintf(stderr, "%s: %s, %s\n", path, plural(errs, "error"), plural(warns, "warning"))
		}
	}
	if ds.HasErrors() {
		return &exitError{Code: 1}
	}
	return nil
}

// file resolves the PATH argument to a binky.toml, shown relative to the
// current directory when it is inside it.
func (c *checkCmd) file() (string, error) {
	p := c.Path
	if p == "" {
		p = "."
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		found, err := config.Find(p)
		if err != nil {
			return "", err
		}
		p = found
	}
	if filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
	}
	return p, nil
}

func writeDiagnostics(w io.Writer, ds config.Diagnostics) {
	if ds == nil {
		ds = config.Diagnostics{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ds)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// envFileRoots is where binky up would look for the env files of the
// worktree at dir: the worktree, then the repository's main worktree.
func envFileRoots(ctx context.Context, dir string) config.EnvFileRoots {
	at := config.EnvFileRoots{Root: dir}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return at
	}
	if main := worktree.MainRoot(abs); main != "" {
		at.Main = main
		at.Ignored = func(rel string) bool { return worktree.Ignored(ctx, abs, rel) }
	}
	return at
}
