//go:build windows

package client

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
)

// startIn has go-plugin start cmd, the RPC adapter, inside j. go-plugin
// calls cmd.Start itself when handed ClientConfig.Cmd, with no hook
// between the start and the first instruction, so here it is handed a
// RunnerFunc instead: jobRunner starts cmd suspended, puts it in the job
// and resumes it (job.start), exactly as a one-shot call's adapter. Given
// a RunnerFunc, go-plugin builds the adapter's environment on a blank
// command it passes in (the handshake cookie, the port range, the client
// certificate, its socket directory), which jobRunner appends to cmd's,
// and makes that socket directory inside sockDir (the Session's own, so
// it goes with it; on Windows the adapter listens on loopback TCP
// anyway). Without a job, go-plugin starts cmd itself.
func startIn(cfg *plugin.ClientConfig, cmd *exec.Cmd, j *job, sockDir string) {
	if j == nil {
		cfg.Cmd = cmd
		return
	}
	cfg.UnixSocketConfig = &plugin.UnixSocketConfig{TempDir: sockDir}
	cfg.RunnerFunc = func(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
		cmd.Env = append(cmd.Env, spec.Env...)
		cmd.Stdin = spec.Stdin
		// Plain pipes, not exec's StdoutPipe: a start that fails closes
		// exec's pipes, and Start may need a second command (startAgain).
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			_ = outR.Close()
			_ = outW.Close()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		return &jobRunner{cmd: cmd, job: j, stdout: outR, stderr: errR, childEnds: []*os.File{outW, errW}}, nil
	}
}

// jobRunner is go-plugin's runner.Runner for an adapter process in a job;
// it is go-plugin's own command runner (internal/cmdrunner) but for the
// start. Kill terminates the whole job: the adapter and what it started.
type jobRunner struct {
	cmd            *exec.Cmd
	job            *job
	stdout, stderr *os.File
	childEnds      []*os.File // the write ends the adapter holds its own copies of once started
	pid            int
}

func (r *jobRunner) Start(context.Context) error {
	first, tried := r.cmd, false
	cmd, err := startRetrying(r.job.start, func() *exec.Cmd {
		if !tried {
			tried = true
			return first
		}
		again := exec.Command(first.Path, first.Args[1:]...)
		again.Env, again.Dir = first.Env, first.Dir
		again.Stdin, again.Stdout, again.Stderr = first.Stdin, first.Stdout, first.Stderr
		return again
	})
	r.cmd = cmd
	for _, f := range r.childEnds {
		_ = f.Close()
	}
	if err != nil {
		_ = r.stdout.Close()
		_ = r.stderr.Close()
		return err
	}
	r.pid = r.cmd.Process.Pid
	return nil
}

// Wait waits for the adapter and then closes the read ends, as exec's
// StdoutPipe would (go-plugin has read them to their end by then, or
// stops reading at the close).
func (r *jobRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	_ = r.stdout.Close()
	_ = r.stderr.Close()
	return err
}

func (r *jobRunner) Kill(context.Context) error {
	r.job.kill()
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *jobRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *jobRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *jobRunner) Name() string          { return r.cmd.Path }
func (r *jobRunner) ID() string            { return strconv.Itoa(r.pid) }

// Diagnose adds nothing to go-plugin's "Unrecognized remote plugin
// message" (handshakeError explains it).
func (r *jobRunner) Diagnose(context.Context) string { return "" }

func (r *jobRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *jobRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

var _ runner.Runner = (*jobRunner)(nil)
