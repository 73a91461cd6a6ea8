//go:build !windows

package world

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
)

// ttySupported says binky run -t can give a command a terminal here.
const ttySupported = true

// runTTY is runMarked for binky run -t: the command runs on a new pty of
// size, in a session of its own with the pty as its controlling terminal
// (so ending its context ends the session's process group, as
// runGrouped's). What it writes on the terminal streams back, redacted, as
// stdout; the caller's Input lines are what it types, and resize it.
func (e *Engine) runTTY(cmd *exec.Cmd, rec *registry.Worktree, env []string, size api.Winsize, in Input, s Progress) int {
	e.mark(cmd, rec, env, runService)
	ptmx, tty, err := pty.Open()
	if err != nil {
		s.Output(0, "stderr", fmt.Sprintf("binky: open a terminal: %v\n", err))
		return -1
	}
	defer ptmx.Close()
	resize := func(ws api.Winsize) { pty.Setsize(ptmx, &pty.Winsize{Rows: ws.Rows, Cols: ws.Cols}) }
	resize(size)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if !hasEnv(cmd.Env, "TERM") {
		cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	}
	whole := &wholeRunes{w: &chunkWriter{s: s, check: 0, name: "stdout", redact: func(s string) string { return s }}}
	out := e.redact.Writer(whole)
	if err := cmd.Start(); err != nil {
		tty.Close()
		s.Output(0, "stderr", fmt.Sprintf("binky: %v\n", err))
		return -1
	}
	tty.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(out, ptmx) // ends with EIO once no process holds the terminal
	}()
	inputs, stop := in.Attach(api.Attach{TTY: true})
	defer stop()
	go feedStdin(inputs, ptmx, resize)
	err = cmd.Wait()
	// A leftover that still holds the terminal gives up its output after
	// 5 s, as runGrouped's WaitDelay.
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		ptmx.SetReadDeadline(time.Now())
		<-copied
	}
	out.Close()
	whole.Flush()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode()
	}
	return -1
}

func hasEnv(env []string, name string) bool {
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			return true
		}
	}
	return false
}
