package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// gitError is a failed git command: the subcommand, and git's message
// trimmed to one line. It wraps the exec error.
type gitError struct {
	sub string
	msg string
	err error
}

func (e *gitError) Error() string {
	if e.msg == "" {
		return "git " + e.sub + ": " + e.err.Error()
	}
	return "git " + e.sub + ": " + e.msg
}

func (e *gitError) Unwrap() error { return e.err }

// git runs git with args in dir and returns its stdout. The environment is
// the caller's, minus the variables that would point git at another
// repository, and with prompts off: binky never waits on a terminal.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = GitEnv()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		sub := firstArg(args)
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("run git %s: git is not on PATH; install git: %w", sub, err)
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("run git %s: %w", sub, ctx.Err())
		}
		return "", &gitError{sub: sub, msg: oneLine(stderr.String()), err: err}
	}
	return stdout.String(), nil
}

// firstArg is the git subcommand in args, skipping global options.
func firstArg(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "command"
}

// GitEnv is os.Environ without the variables that redirect git to another
// repository or index (set when binky runs from a git hook, say), with
// prompts off. Every git binky runs gets it.
func GitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
			"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_TERMINAL_PROMPT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// oneLine turns git's stderr into one line: from the first "fatal:" or
// "error:" line (prefix dropped) on, its lines joined by spaces, hints
// left out; with no such line, the last non-empty line.
func oneLine(stderr string) string {
	var msg []string
	last := ""
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "hint:") {
			continue
		}
		last = l
		if msg == nil {
			for _, p := range []string{"fatal: ", "error: "} {
				if strings.HasPrefix(l, p) {
					msg = []string{strings.TrimPrefix(l, p)}
				}
			}
			continue
		}
		msg = append(msg, l)
	}
	if msg == nil {
		return last
	}
	return strings.Join(msg, " ")
}

// lines splits command output into its non-empty lines.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}
