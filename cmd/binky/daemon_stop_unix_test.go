//go:build !windows

package main

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/ctl"
	"github.com/binkyhq/binky/host/ctl/ctltest"
)

func stopHome(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "stop") // short: a socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestDaemonStopStuck: a daemon that takes the stop but never exits (it
// keeps daemon.pid locked) makes `daemon stop` fail naming its pid,
// rather than say "stopped".
func TestDaemonStopStuck(t *testing.T) {
	const pid = 515151
	for _, on := range []ctltest.OnStop{ctltest.Hang, ctltest.Ignore} {
		home := stopHome(t)
		ctltest.Start(t, home, pid, on)
		// The fake never exits: any wait gives the same answer.
		err := (&daemonStopCmd{wait: 200 * time.Millisecond}).Run(&globals{ctx: context.Background(), home: home})
		var ns *ctl.NotStoppedError
		if !errors.As(err, &ns) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(pid)) {
			t.Errorf("on %d: daemon stop = %v; want an error naming pid %d", on, err, pid)
		}
	}
}

// TestDaemonStopExits: a daemon that exits makes `daemon stop` exit 0.
func TestDaemonStopExits(t *testing.T) {
	home := stopHome(t)
	f := ctltest.Start(t, home, 616161, ctltest.Exit)
	if code := run([]string{"--home", home, "daemon", "stop"}); code != 0 {
		t.Errorf("daemon stop exit %d; want 0", code)
	}
	select {
	case <-f.Stopped:
	default:
		t.Error("daemon stop did not ask the daemon to stop")
	}
	// Nothing left: "no daemon was running", exit 0.
	if code := run([]string{"--home", home, "daemon", "stop"}); code != 0 {
		t.Errorf("second daemon stop exit %d; want 0", code)
	}
}
