//go:build linux

package supervisor

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestExitOf: the exit of a marked process is learnt from its pidfd; a
// process without that marker, or one gone, is not watched (nil: the
// caller polls).
func TestExitOf(t *testing.T) {
	cmd, stdin := startMarked(t, "home/p/w/run@x")
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx := context.Background()
	pid := cmd.Process.Pid
	if c := ExitOf(ctx, pid, "home/p/w/run@y"); c != nil {
		t.Errorf("ExitOf with another marker: a watch; want nil")
	}
	exited := ExitOf(ctx, pid, "home/p/w/run@x")
	if exited == nil {
		t.Fatal("ExitOf of a live marked process: nil; want a watch")
	}
	select {
	case <-exited:
		t.Fatal("the watch fired while the process still reads its stdin")
	default:
	}
	stdin.Close() // it ends
	select {
	case <-exited:
	case <-time.After(30 * time.Second): // only catches a hang
		t.Fatal("the watch never fired after the process ended")
	}
	cmd.Wait()
	if c := ExitOf(ctx, pid, "home/p/w/run@x"); c != nil {
		t.Errorf("ExitOf of a reaped process: a watch; want nil")
	}
}

// TestMarkerReadRightAfterStart: a process whose Start has just returned
// may still be inside its exec, its environment not yet laid out (an empty
// /proc/<pid>/environ; about one start in ten on this project's VMs).
// hasMarker waits that moment out instead of calling the process
// unmarked.
func TestMarkerReadRightAfterStart(t *testing.T) {
	for i := range 200 {
		cmd, stdin := startMarked(t, "home/p/w/run@x")
		ok := hasMarker(cmd.Process.Pid, "home/p/w/run@x")
		stdin.Close()
		cmd.Wait()
		if !ok {
			t.Fatalf("start %d: a live marked process read as unmarked right after Start", i)
		}
	}
}

// startMarked starts a shell that carries MarkerEnv=marker and waits on
// its stdin (closing it ends the shell).
func startMarked(t *testing.T, marker string) (*exec.Cmd, io.Closer) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read x")
	cmd.Env = []string{MarkerEnv + "=" + marker}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin
}
