//go:build windows

package winjob

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/cmdshell"
	"github.com/binkyhq/binky/internal/wine"
)

const hang = 30 * time.Second

// TestHelperProcess is the child the tests start (through cmd.exe): it
// writes its pid to $WINJOB_PIDFILE and sleeps; with WINJOB_BREAK it
// writes "break" to $WINJOB_PIDFILE.break on CTRL_BREAK_EVENT and exits.
// With WINJOB_SPAWN it starts another of itself (a grandchild) and exits
// once that one has written its pid.
func TestHelperProcess(t *testing.T) {
	pidfile := os.Getenv("WINJOB_PIDFILE")
	if pidfile == "" {
		t.Skip("runs only as a child process of this package's tests")
	}
	if os.Getenv("WINJOB_SPAWN") == "1" {
		c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		c.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "WINJOB_SPAWN=") }), "WINJOB_SPAWN=0")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		for _, err := os.Stat(pidfile); err != nil; _, err = os.Stat(pidfile) {
			time.Sleep(10 * time.Millisecond)
		}
		os.Exit(0)
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, os.Interrupt)
	if err := os.WriteFile(pidfile+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Rename(pidfile+".tmp", pidfile)
	<-ints
	os.WriteFile(pidfile+".break", []byte("break"), 0o600)
	os.Exit(0)
}

// helperCmd is cmd.exe running this test binary's helper, with env added.
func helperCmd(ctx context.Context, pidfile string, env ...string) *exec.Cmd {
	cmd := cmdshell.Command(ctx, `"`+os.Args[0]+`" -test.run=^TestHelperProcess$`)
	cmd.Env = append(append(os.Environ(), "WINJOB_PIDFILE="+pidfile), env...)
	return cmd
}

// waitPid waits for the helper's pid file.
func waitPid(t *testing.T, pidfile string) int {
	t.Helper()
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s after %s", pidfile, hang)
	return 0
}

// openProc is a handle that sees pid's exit.
func openProc(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("open pid %d: %v", pid, err)
	}
	t.Cleanup(func() {
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	})
	return h
}

func exited(h windows.Handle, d time.Duration) bool {
	ev, _ := windows.WaitForSingleObject(h, uint32(d.Milliseconds()))
	return ev == windows.WAIT_OBJECT_0
}

func testName(t *testing.T) string {
	return fmt.Sprintf("test%d/%s/", os.Getpid(), t.Name())
}

// TestNamedJobHoldsTree: a service's job holds cmd.Exe and what it started,
// is found by name and by marker prefix, and terminating it ends the
// grandchild.
func TestNamedJobHoldsTree(t *testing.T) {
	prefix := testName(t)
	name := Name(prefix + "web")
	j, err := Create(name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := helperCmd(context.Background(), pidfile)
	if err := j.Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() { j.Terminate(1); cmd.Wait() }()
	grandchild := openProc(t, waitPid(t, pidfile))
	pids, err := j.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, cmd.Process.Pid) || len(pids) < 2 {
		t.Errorf("Pids() = %v; want cmd.exe %d and the helper", pids, cmd.Process.Pid)
	}
	o, err := Open(name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer o.Close()
	if _, err := Open(Name(prefix + "nothing")); !IsNotFound(err) {
		t.Errorf("Open(a job nobody made): %v; want not found", err)
	}
	names, err := Names(prefix)
	if err != nil {
		t.Fatalf("Names: %v", err)
	}
	if !slices.Equal(names, []string{name}) {
		t.Errorf("Names(%q) = %q; want [%q]", prefix, names, name)
	}
	if err := o.Terminate(1); err != nil {
		t.Fatal(err)
	}
	if !exited(grandchild, hang) {
		t.Fatal("the grandchild outlived TerminateJobObject")
	}
	deadline := time.Now().Add(hang)
	for !j.Empty() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !j.Empty() {
		pids, _ := j.Pids()
		t.Errorf("job still holds %v after Terminate", pids)
	}
}

// TestNamedJobOutlivesCreator: the name stays while the process lives,
// although the creator closed its handle (the process holds one).
func TestNamedJobOutlivesCreator(t *testing.T) {
	name := Name(testName(t) + "web")
	j, err := Create(name, false)
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := helperCmd(context.Background(), pidfile)
	if err := j.Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	h := openProc(t, waitPid(t, pidfile))
	j.Close()
	o, err := Open(name)
	if err != nil {
		t.Fatalf("Open after the creator closed its handle: %v", err)
	}
	defer o.Close()
	if err := o.Terminate(1); err != nil {
		t.Fatal(err)
	}
	if !exited(h, hang) {
		t.Fatal("the helper outlived TerminateJobObject")
	}
}

// TestRunEndsLeftovers: a one-shot command's grandchild, left running when
// the command exits, dies with Run's job.
func TestRunEndsLeftovers(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := helperCmd(context.Background(), pidfile, "WINJOB_SPAWN=1")
	if err := Run(cmd); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(waitPid(t, pidfile)))
	if err != nil {
		return // gone already
	}
	defer windows.CloseHandle(h)
	if !exited(h, hang) {
		t.Fatal("the grandchild outlived Run")
	}
}

// TestRunCancelEndsJob: cancelling a CommandContext command ends the job.
func TestRunCancelEndsJob(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := helperCmd(ctx, pidfile)
	done := make(chan error, 1)
	go func() { done <- Run(cmd) }()
	h := openProc(t, waitPid(t, pidfile))
	cancel()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatal("Run did not return after cancel")
	}
	if !exited(h, hang) {
		t.Fatal("the helper outlived the cancel")
	}
}

// TestCtrlBreak: CTRL_BREAK_EVENT reaches a service's group through its
// hidden console, and a child that handles it stops cleanly.
func TestCtrlBreak(t *testing.T) {
	wine.Skip(t, "GenerateConsoleCtrlEvent fails with \"Invalid handle\" on a console joined with AttachConsole")
	j, err := Create("", true)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := helperCmd(context.Background(), pidfile)
	if err := j.Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { j.Terminate(1); cmd.Wait() }()
	h := openProc(t, waitPid(t, pidfile))
	pids, _ := j.Pids()
	if err := CtrlBreak(cmd.Process.Pid, pids); err != nil {
		t.Fatalf("CtrlBreak: %v", err)
	}
	if !exited(h, hang) {
		t.Fatal("the helper did not stop on CTRL_BREAK_EVENT")
	}
	if b, _ := os.ReadFile(pidfile + ".break"); string(b) != "break" {
		t.Errorf("%s.break = %q; want break", pidfile, b)
	}
}

// TestServiceJobsAreGlobal: a service job is named in Global\, which every
// logon session of the user sees (a daemon restarted from an SSH session
// finds the services the desktop's daemon started), and Names finds it.
func TestServiceJobsAreGlobal(t *testing.T) {
	name := fmt.Sprintf("binky-test-global-%d", os.Getpid())
	j, err := Create(name, true)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	p, _ := windows.UTF16PtrFromString(`Global\` + name)
	r, _, e := procOpenJob.Call(jobQuery, 0, uintptr(unsafe.Pointer(p)))
	if r == 0 {
		t.Fatalf(`open Global\%s: %v; want the job there`, name, e)
	}
	windows.CloseHandle(windows.Handle(r))
	o, err := Open(name)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	o.Close()
	names, err := Names("test-global-")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, name) {
		t.Errorf("Names(test-global-) = %v; want %s in it", names, name)
	}
}
