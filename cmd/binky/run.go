package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

// runCmd is `binky run <worktree> -- <command> [args…]`: one command in a
// world's environment (as verify gives its checks), started once the jobs
// queue has a place for it (docs/admission.md). -i passes stdin on, -t
// gives the command a terminal (binky run -it wt -- psql).
type runCmd struct {
	Worktree    string   `arg:"" optional:"" help:"Worktree name or branch; default (or .): the worktree you stand in (binky run -- make test)."`
	Argv        []string `arg:"" optional:"" passthrough:"" help:"The command and its arguments, after --."`
	Project     string   `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet       bool     `short:"q" help:"Do not report the place in the jobs queue."`
	Interactive bool     `short:"i" help:"Pass stdin on to the command (a pipe, or with -t what you type)."`
	TTY         bool     `short:"t" name:"tty" help:"Run the command on a terminal (a pty) sized as yours: psql, a shell, a REPL. Needs a terminal on stdin."`
}

func (c *runCmd) Run(g *globals) error {
	wt, argv := runWorld(os.Args[1:], c.Worktree, c.Argv)
	if len(argv) == 0 {
		return &exitError{Code: 2, Err: fmt.Errorf("run: give the command after --: binky run %s -- make test", c.Worktree)}
	}
	args := api.RunArgs{Argv: argv, Stdin: c.Interactive || c.TTY}
	var raw *term.State
	if c.TTY {
		fd := int(os.Stdin.Fd())
		if !term.IsTerminal(fd) {
			return &exitError{Code: 2, Err: errors.New("run -t: stdin is not a terminal; use -i for piped input")}
		}
		args.TTY = &api.Winsize{Rows: 24, Cols: 80}
		if w, h, err := term.GetSize(fd); err == nil {
			args.TTY = &api.Winsize{Rows: uint16(h), Cols: uint16(w)}
		}
		defer func() {
			if raw != nil {
				term.Restore(fd, raw)
			}
		}()
	}
	cl, err := g.client()
	if err != nil {
		return err
	}
	args.WorldRef = cli.WorldRef(wt, c.Project)
	var id string    // the run's journal id, when it has one
	var off [2]int64 // how far its stdout and stderr reached us
	h := api.Handlers{
		Progress: func(p api.Progress) {
			if p.Step == api.ProgressRunID {
				id = p.Message
				return
			}
			if !c.Quiet {
				fmt.Fprintf(os.Stderr, "binky: %s %s\n", p.Step, p.Message)
			}
		},
		Output: func(o api.Output) {
			if o.Stream == "stderr" {
				fmt.Fprint(os.Stderr, o.Data)
				off[1] = max(off[1], o.Offset)
			} else {
				fmt.Fprint(os.Stdout, o.Data)
				off[0] = max(off[0], o.Offset)
			}
		},
		// The command started: what we read from stdin goes to it; on a
		// terminal, raw (the command's terminal does the echo and the
		// line editing, ^C and ^D are bytes for it) and resized with ours.
		Attach: func(a api.Attach, in *api.InputWriter) {
			if c.TTY {
				fd := int(os.Stdin.Fd())
				if st, err := term.MakeRaw(fd); err == nil {
					raw = st
				}
				watchResize(g.ctx, fd, in)
			}
			go sendStdin(os.Stdin, in, !c.TTY)
		},
	}
	var res api.RunResult
	err = cl.Call(g.ctx, api.OpRun, args, h, &res)
	if raw != nil {
		term.Restore(int(os.Stdin.Fd()), raw)
		raw = nil
	}
	if err != nil && id != "" && g.ctx.Err() == nil {
		err = c.follow(g, id, &off, h, &res, err)
	}
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("run: %w", err)}
	}
	switch {
	case res.ExitCode == 0:
		return nil
	case res.ExitCode < 0:
		return &exitError{Code: 1}
	default:
		return &exitError{Code: res.ExitCode}
	}
}

// runWorld splits what kong parsed into the world and the command. The
// world is optional: `binky run -- make test` runs in the world you stand
// in, but kong, which drops that first "--", hands "make" over as the
// worktree; raw (the command line) tells the two apart: a worktree typed
// after the first "--" is the command's first word.
func runWorld(raw []string, worktree string, argv []string) (string, []string) {
	if worktree != "" {
		for _, a := range raw {
			if a == "--" {
				return "", append([]string{worktree}, argv...)
			}
			if a == worktree {
				break
			}
		}
	}
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if worktree == "." {
		worktree = ""
	}
	return worktree, argv
}

// sendStdin sends what r gives to the command, and its end when eof (a
// pipe; a terminal's ^D is a byte the command's terminal reads as EOF).
func sendStdin(r io.Reader, in *api.InputWriter, eof bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if in.Send(api.Input{Data: buf[:n]}) != nil {
				return
			}
		}
		if err != nil {
			if eof {
				in.Send(api.Input{EOF: true})
			}
			return
		}
	}
}

// follow follows the journaled run id again after its daemon went away
// (a crash, a kill -9, a restart): the next daemon keeps a queued run's
// place and a running command running, and tells how it ended. It gives
// up after a minute without a daemon, saying where the output went.
func (c *runCmd) follow(g *globals, id string, off *[2]int64, h api.Handlers, res *api.RunResult, cause error) error {
	var ae *api.Error
	if errors.As(cause, &ae) && ae.Code != api.CodeFailed {
		return cause // the daemon answered: no restart to ride out
	}
	fmt.Fprintf(os.Stderr, "binky: lost the daemon (%v); following run %s again\n", cause, id)
	deadline := time.Now().Add(time.Minute)
	for {
		cl, err := g.client()
		if err == nil {
			err = cl.Call(g.ctx, api.OpRun, api.RunArgs{Resume: id, Offsets: *off}, h, res)
			if err == nil || errors.As(err, &ae) && ae.Code != api.CodeFailed || errors.As(err, &ae) && strings.Contains(ae.Message, "was not started") {
				return err
			}
		}
		if g.ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("%w; run %s's output and exit status are in %s", err, id, filepath.Join(g.home, "runs", id))
		}
		select {
		case <-g.ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
