//go:build unix

package client

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
)

// stopWait bounds how long a test waits for an adapter to exit (it checks
// its host every quarter second; the margin is for a loaded machine).
const stopWait = 15 * time.Second

// TestSessionAdapterExitsWhenHostDies SIGKILLs a host holding an RPC
// session: the adapter (built on sdk.Run) must exit and leave neither its
// socket nor the session's socket directory behind.
func TestSessionAdapterExitsWhenHostDies(t *testing.T) {
	fake(t, "run") // skips where the fakes do not run
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), hostEnv+"=1")
	var hostErr strings.Builder
	host.Stderr = &hostErr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatalf("start fake host: %v", err)
	}
	t.Cleanup(func() { // a no-op once the test has killed and reaped it
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("fake host printed no adapter (stderr: %s)", hostErr.String())
	}
	pidText, dir, _ := strings.Cut(sc.Text(), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || dir == "" {
		t.Fatalf("fake host printed %q; want \"<pid> <dir>\"", sc.Text())
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("session socket directory before the host dies: %v", err)
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatalf("kill fake host: %v", err)
	}
	_ = host.Wait()
	waitGone(t, pid, dir, "its host was killed")
}

// TestSessionAdapterExitsOnSIGTERM: an adapter serving a live session exits
// on SIGTERM and removes its socket; the session then reports the exit.
func TestSessionAdapterExitsOnSIGTERM(t *testing.T) {
	b := fake(t, "run")
	s, err := b.StartRPC(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pid := s.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, s.sockDir, "SIGTERM")
	if _, err := s.CallRaw(t.Context(), sdk.CallDescribe, []byte(`{"protocol":1}`)); err == nil {
		t.Errorf("call after the adapter exited: got no error")
	}
}

// waitGone waits up to stopWait for pid to end and dir to disappear after
// what happened, and fails the test naming what remains.
func waitGone(t *testing.T, pid int, dir, what string) {
	t.Helper()
	deadline := time.Now().Add(stopWait)
	for {
		_, statErr := os.Stat(dir)
		if !alive(pid) && errors.Is(statErr, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			if alive(pid) {
				t.Errorf("adapter pid %d still runs %s after %s", pid, stopWait, what)
			}
			if statErr == nil {
				entries, _ := os.ReadDir(dir)
				t.Errorf("socket directory %s still exists %s after %s (holding %d entries)", dir, stopWait, what, len(entries))
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive says whether pid runs; a zombie (exited, waiting to be reaped by
// its new parent) counts as dead.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}
