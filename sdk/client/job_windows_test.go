package client

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/sdk"
)

// goneWait bounds how long a test waits for a process to end once its job
// was terminated or closed (the margin is for Wine on a loaded machine).
const goneWait = 30 * time.Second

// spawnAdapter is the "spawn" fake adapter, its grandchildren's pid files
// in a directory of the test's own.
func spawnAdapter(t *testing.T) (*Binary, string) {
	t.Helper()
	dir := t.TempDir()
	b := selfAdapter(t, "spawn")
	b.Env = append(b.Env, pidDirEnv+"="+dir)
	return b, dir
}

// watch opens pid for the test to see it end; the test's cleanup ends it,
// should it still run.
func watch(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("open pid %d: %v", pid, err)
	}
	t.Cleanup(func() {
		_ = windows.TerminateProcess(h, 1)
		_ = windows.CloseHandle(h)
	})
	return h
}

// mustEnd fails the test unless the process h ends within goneWait.
func mustEnd(t *testing.T, h windows.Handle, what string) {
	t.Helper()
	if ev, err := windows.WaitForSingleObject(h, uint32(goneWait.Milliseconds())); ev != windows.WAIT_OBJECT_0 {
		t.Errorf("%s still runs %s later (%#x, %v)", what, goneWait, ev, err)
	}
}

// mustBeGone fails the test unless pid, already out of its job's reach
// when the test learnt it, is gone or ends within goneWait.
func mustBeGone(t *testing.T, pid int, what string) {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return // no such process
	}
	defer windows.CloseHandle(h)
	if ev, _ := windows.WaitForSingleObject(h, uint32(goneWait.Milliseconds())); ev != windows.WAIT_OBJECT_0 {
		_ = windows.TerminateProcess(h, 1)
		t.Errorf("%s (pid %d) still runs %s after its adapter's call ended", what, pid, goneWait)
	}
}

// cancelOnPid returns a context cancelled once pidfile is written, and
// the writer's handle (opened while it lives).
func cancelOnPid(t *testing.T, pidfile string) (context.Context, func() windows.Handle) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	got := make(chan windows.Handle, 1)
	go func() {
		defer cancel()
		wctx, stop := context.WithTimeout(t.Context(), time.Minute)
		defer stop()
		pid, err := readPidFile(wctx, pidfile)
		if err != nil {
			got <- 0
			return
		}
		h, _ := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
		got <- h
	}()
	return ctx, func() windows.Handle {
		h := <-got
		if h == 0 {
			t.Fatalf("the adapter's grandchild wrote no pid to %s", pidfile)
		}
		t.Cleanup(func() {
			_ = windows.TerminateProcess(h, 1)
			_ = windows.CloseHandle(h)
		})
		return h
	}
}

func grandchildPid(t *testing.T, address string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(address, "pid://"))
	if err != nil {
		t.Fatalf("resolve answered %q; want pid://<pid>", address)
	}
	return pid
}

// TestOneShotJobEndsGrandchild: what a one-shot adapter started is ended
// with its job, after a call that returned and after one that timed out.
func TestOneShotJobEndsGrandchild(t *testing.T) {
	b, dir := spawnAdapter(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	got, err := Resolve(ctx, b, &sdk.ResolveRequest{Target: sdk.Target{Slice: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	mustBeGone(t, grandchildPid(t, got.Address), "the grandchild of a finished call")

	hctx, grandchild := cancelOnPid(t, filepath.Join(dir, "hang.pid"))
	_, err = b.CallRaw(hctx, sdk.CallResolve, []byte(`{"protocol":1,"slice":"hang"}`))
	if err == nil {
		t.Fatal("a call cancelled mid-way: got no error")
	}
	mustEnd(t, grandchild(), "the grandchild of a cancelled call")
}

// TestSessionJobEndsGrandchild: what an RPC adapter started is ended with
// its job when the session closes, and when a call times out.
func TestSessionJobEndsGrandchild(t *testing.T) {
	b, dir := spawnAdapter(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	s, err := b.StartRPC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	adapter := watch(t, s.cmd.Process.Pid)
	got, err := Resolve(ctx, s, &sdk.ResolveRequest{Target: sdk.Target{Slice: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	grandchild := watch(t, grandchildPid(t, got.Address))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustEnd(t, adapter, "the adapter of a closed session")
	mustEnd(t, grandchild, "the grandchild of a closed session")

	s, err = b.StartRPC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	adapter = watch(t, s.cmd.Process.Pid)
	hctx, hung := cancelOnPid(t, filepath.Join(dir, "hang.pid"))
	if _, err := s.CallRaw(hctx, sdk.CallResolve, []byte(`{"protocol":1,"slice":"hang"}`)); err == nil {
		t.Fatal("a call cancelled mid-way: got no error")
	}
	mustEnd(t, adapter, "the adapter of a session whose call timed out")
	mustEnd(t, hung(), "the grandchild of a call that timed out")
}

// TestSessionJobDiesWithHost: when the host dies, its adapter's job closes
// with it, and the adapter and what it started end (the adapter exits by
// itself too, seeing its host gone; the grandchild only through the job).
func TestSessionJobDiesWithHost(t *testing.T) {
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), hostEnv+"=1", pidDirEnv+"="+t.TempDir())
	var hostErr strings.Builder
	host.Stderr = &hostErr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatalf("start fake host: %v", err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("fake host printed no adapter (stderr: %s)", hostErr.String())
	}
	f := strings.Fields(sc.Text())
	if len(f) < 3 {
		t.Fatalf("fake host printed %q; want \"<adapter pid> <dir> <grandchild pid>\"", sc.Text())
	}
	apid, err1 := strconv.Atoi(f[0])
	gpid, err2 := strconv.Atoi(f[len(f)-1])
	if err1 != nil || err2 != nil {
		t.Fatalf("fake host printed %q; want \"<adapter pid> <dir> <grandchild pid>\"", sc.Text())
	}
	adapter, grandchild := watch(t, apid), watch(t, gpid)
	if err := host.Process.Kill(); err != nil {
		t.Fatalf("kill fake host: %v", err)
	}
	_ = host.Wait()
	mustEnd(t, adapter, "the adapter of a killed host")
	mustEnd(t, grandchild, "the grandchild of a killed host's adapter")
}
