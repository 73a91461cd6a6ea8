//go:build unix

package sdk

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// parentPoll is how often an RPC adapter checks that its host still runs.
const parentPoll = 250 * time.Millisecond

// stopSignals end a one-shot call (its context is cancelled) and an RPC
// adapter (it stops serving and exits).
func stopSignals() []os.Signal {
	return []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
}

// ignoreBrokenPipe makes a write to a closed stdout or stderr an error
// instead of a fatal SIGPIPE.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// watchParent calls gone when the parent process ppid exits, and returns
// when ctx ends. An orphan is re-parented (to init or a subreaper),
// so its parent pid changes; a host that is itself pid 1 is never lost.
func watchParent(ctx context.Context, ppid int, gone func()) {
	t := time.NewTicker(parentPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				gone()
				return
			}
		}
	}
}
