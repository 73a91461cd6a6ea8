//go:build !windows

package ctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/ctl/ctltest"
)

// shortHome is a BINKY_HOME with a path short enough for a socket.
func shortHome(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// long is the wait where a test expects success: it returns as soon as the
// daemon has exited, so the length is no timing assumption.
const long = 2 * time.Minute

// short is the wait where the fake never exits: the answer is the same
// for any wait.
const short = 300 * time.Millisecond

const fakePid = 424242

func TestStopNoDaemon(t *testing.T) {
	for _, home := range []string{shortHome(t), filepath.Join(shortHome(t), "never-made")} {
		was, err := StopWithin(context.Background(), home, long)
		if was || err != nil {
			t.Errorf("Stop with no daemon in %s = %v, %v; want false, nil", home, was, err)
		}
	}
	// A daemon.pid nobody holds is a daemon that exited.
	home := shortHome(t)
	os.WriteFile(filepath.Join(home, PidName), []byte("123\n"), 0o600)
	if was, err := StopWithin(context.Background(), home, long); was || err != nil {
		t.Errorf("Stop with a stale daemon.pid = %v, %v; want false, nil", was, err)
	}
}

func TestStopExits(t *testing.T) {
	home := shortHome(t)
	f := ctltest.Start(t, home, fakePid, ctltest.Exit)
	was, err := StopWithin(context.Background(), home, long)
	if !was || err != nil {
		t.Fatalf("Stop = %v, %v; want true, nil", was, err)
	}
	select {
	case <-f.Stopped:
	default:
		t.Error("Stop reported success without asking the daemon to stop")
	}
	if held, _, _, _ := lockState(home); held {
		t.Error("Stop reported success while daemon.pid is held")
	}
}

// TestStopHangingDaemon: a daemon that takes the stop, closes its socket
// and then never exits (its shutdown waits on a request blocked forever)
// is not "stopped": Stop fails naming its pid and the lock it holds.
func TestStopHangingDaemon(t *testing.T) {
	for _, on := range []ctltest.OnStop{ctltest.Hang, ctltest.Ignore} {
		home := shortHome(t)
		f := ctltest.Start(t, home, fakePid, on)
		was, err := StopWithin(context.Background(), home, short)
		var ns *NotStoppedError
		if !was || !errors.As(err, &ns) {
			t.Fatalf("on %d: Stop = %v, %v; want true and a *NotStoppedError", on, was, err)
		}
		if ns.Pid != fakePid || !ns.Asked || ns.Answers != (on == ctltest.Ignore) {
			t.Errorf("on %d: %+v; want pid %d, asked, answers %v", on, ns, fakePid, on == ctltest.Ignore)
		}
		msg := err.Error()
		for _, want := range []string{"pid " + strconv.Itoa(fakePid), "did not exit", filepath.Join(home, PidName), "kill " + strconv.Itoa(fakePid)} {
			if !strings.Contains(msg, want) {
				t.Errorf("on %d: %q lacks %q", on, msg, want)
			}
		}
		<-f.Stopped
		f.Close()
	}
}

// TestStopWedgedDaemon: a daemon that answers ping but never the stop is
// not "stopped" either.
func TestStopWedgedDaemon(t *testing.T) {
	home := shortHome(t)
	f := ctltest.Start(t, home, fakePid, ctltest.Wedge)
	was, err := StopWithin(context.Background(), home, short)
	var ns *NotStoppedError
	if !was || !errors.As(err, &ns) || ns.Pid != fakePid || !ns.Asked || ns.Answers {
		t.Fatalf("Stop = %v, %v (%+v); want true and a *NotStoppedError for pid %d, asked, not answering", was, err, ns, fakePid)
	}
	if !strings.Contains(err.Error(), "kill "+strconv.Itoa(fakePid)) {
		t.Errorf("%q does not name the pid", err)
	}
	f.Close()
}

// TestStopLockHeldNoSocket: a daemon holding daemon.pid but not answering
// (a stop already sent, a shutdown stuck) is no "no daemon was running":
// Stop fails naming its pid; once it exits, Stop says it stopped.
func TestStopLockHeldNoSocket(t *testing.T) {
	home := shortHome(t)
	lock := ctltest.HoldLock(t, home, fakePid)
	was, err := StopWithin(context.Background(), home, short)
	var ns *NotStoppedError
	if !was || !errors.As(err, &ns) || ns.Pid != fakePid || ns.Asked {
		t.Fatalf("Stop = %v, %v; want true and a *NotStoppedError for pid %d, not asked", was, err, fakePid)
	}
	if !strings.Contains(err.Error(), "pid "+strconv.Itoa(fakePid)) || !strings.Contains(err.Error(), "did not stop") {
		t.Errorf("%q does not name the pid or say it did not stop", err)
	}
	lock.Close()
	if was, err := StopWithin(context.Background(), home, long); was || err != nil {
		t.Errorf("after the lock is released: Stop = %v, %v; want false, nil", was, err)
	}
}

func TestStopCanceled(t *testing.T) {
	home := shortHome(t)
	ctltest.Start(t, home, fakePid, ctltest.Hang)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := StopWithin(ctx, home, long); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop with a canceled context = %v; want context.Canceled", err)
	}
}
