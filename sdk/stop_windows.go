//go:build windows

package sdk

import (
	"context"
	"os"
	"syscall"
)

// stopSignals end a one-shot call (its context is cancelled) and an RPC
// adapter (it stops serving and exits).
// (Go delivers a console close, logoff or shutdown as SIGTERM.)
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// ignoreBrokenPipe does nothing: Windows has no SIGPIPE.
func ignoreBrokenPipe() {}

// watchParent calls gone when the parent process ppid exits, and returns
// when ctx ends. Windows keeps a dead parent's pid, so it waits on a
// handle to the parent instead of watching the pid change.
func watchParent(ctx context.Context, ppid int, gone func()) {
	p, err := os.FindProcess(ppid)
	if err != nil {
		return // the parent is already gone or cannot be opened; nothing to watch
	}
	exited := make(chan struct{})
	go func() {
		if _, err := p.Wait(); err == nil {
			close(exited)
		}
	}()
	select {
	case <-ctx.Done():
	case <-exited:
		gone()
	}
}
