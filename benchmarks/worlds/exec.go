package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// command is one program run to completion.
type command struct {
	name string
	args []string
	dir  string
	env  []string // nil: this program's environment
}

// run runs c and returns its stdout. A failure carries the command line and
// the tail of what it printed, which is where the cause is.
func run(ctx context.Context, c command) (string, error) {
	cmd := exec.CommandContext(ctx, c.name, c.args...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	cmd.WaitDelay = 10 * time.Second
	ownGroup(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		out := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		if len(out) > 2000 {
			out = "…" + out[len(out)-2000:]
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return stdout.String(), fmt.Errorf("%s: %w\n%s", c, err, out)
	}
	return stdout.String(), nil
}

func (c command) String() string {
	return strings.Join(append([]string{c.name}, c.args...), " ")
}

// runInput is run with stdin fed from in.
func runInput(ctx context.Context, c command, in []byte) (string, error) {
	cmd := exec.CommandContext(ctx, c.name, c.args...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	cmd.WaitDelay = 10 * time.Second
	ownGroup(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && stdout.Len() == 0 {
		return "", fmt.Errorf("%s: %w\n%s", c, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
