package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/compose"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/safefile"
)

// initCmd writes a first binky.toml from the directory's docker-compose
// project (host/compose). It never reads a value of .env, only its names.
type initCmd struct {
	Force  bool     `help:"Overwrite an existing binky.toml."`
	Stdout bool     `help:"Print the file instead of writing it."`
	JSON   bool     `help:"Print what was mapped and what was left as TODO as JSON (with the file under \"toml\" when --stdout is given)."`
	File   []string `short:"f" help:"Compose files to read, later ones overriding earlier (default: compose.yaml or docker-compose.yml and its .override file)." placeholder:"FILE"`
	Dir    string   `arg:"" optional:"" help:"The directory holding the compose project (default: the current directory)." placeholder:"DIR"`
}

func (c *initCmd) Run(g *globals) error {
	return c.run(os.Stdout, os.Stderr)
}

func (c *initCmd) run(stdout, stderr io.Writer) error {
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("init: resolve %s: %w", dir, err)
	}
	target := filepath.Join(dir, config.FileName)
	if !c.Stdout && !c.Force {
		if _, err := os.Lstat(target); err == nil {
			return &exitError{Code: 1, Err: fmt.Errorf("init: %s already exists: edit it, or run binky init --force to replace it (--stdout prints what init would write)", target)}
		}
	}
	p, err := compose.Load(dir, c.File...)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("init: %w", err)}
	}
	data, sum := compose.Render(p, filepath.Base(abs))
	// Rule 1, checked on every run and not only in tests: what init
	// writes passes binky check.
	if _, ds, err := config.Parse(target, data); err != nil || ds.HasErrors() {
		return &exitError{Code: 1, Err: fmt.Errorf("init: the file init made does not pass binky check (a bug; please report it with the compose file): %v %v", err, ds)}
	}
	if !c.Stdout {
		if err := writeNew(target, data, c.Force); err != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("init: write %s: %w", target, err)}
		}
	}
	if c.JSON {
		out := struct {
			File string `json:"file,omitempty"`
			compose.Summary
			TOML string `json:"toml,omitempty"`
		}{Summary: sum}
		if c.Stdout {
			out.TOML = string(data)
		} else {
			out.File = target
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	if c.Stdout {
		_, _ = stdout.Write(data)
	} else {
		fmt.Fprintf(stderr, "wrote %s from %s\n", target, strings.Join(sum.Files, ", "))
	}
	printSummary(stderr, sum)
	return nil
}

func printSummary(w io.Writer, sum compose.Summary) {
	for _, m := range sum.Adapters {
		fmt.Fprintf(w, "  %-12s %s -> adapter %s\n", m.Service, m.Image, m.Adapter)
	}
	for _, m := range sum.TODO {
		fmt.Fprintf(w, "  %-12s TODO (commented out): %s\n", m.Service, m.Reason)
	}
	if len(sum.V1) > 0 {
		fmt.Fprintf(w, "read %s in compose's first format (services at the top level)\n", strings.Join(sum.V1, ", "))
	}
	if len(sum.Kept) > 0 {
		fmt.Fprintf(w, "kept compose's plain values of: %s\n", strings.Join(sum.Kept, ", "))
	}
	if len(sum.Missing) > 0 {
		fmt.Fprintf(w, "set these in your shell or .env before binky up: %s\n", strings.Join(sum.Missing, ", "))
	}
	fmt.Fprintln(w, "next: fill in the TODOs, then run binky check")
}

// writeNew writes data to path, refusing to replace a file unless force.
func writeNew(path string, data []byte, force bool) error {
	// Opening a FIFO for writing would block; a device or directory is
	// no place for a config.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is a %s, not a regular file", path, safefile.Kind(st.Mode()))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("it already exists: run binky init --force to replace it")
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
