//go:build windows

package supervisor

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/cmdshell"
)

// TestHelperSleeper is the grandchild of TestPauseGroupWindows: it sleeps
// until killed.
func TestHelperSleeper(t *testing.T) {
	if os.Getenv("BINKY_SUPERVISOR_SLEEPER") != "1" {
		t.Skip("runs only as a child process of TestPauseGroupWindows")
	}
	time.Sleep(time.Hour)
}

// TestPauseGroupWindows: a service tree (cmd.exe and what it started) is
// suspended, resumed and killed as one.
func TestPauseGroupWindows(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := cmdshell.Command(context.Background(), `"`+exe+`" -test.run=^TestHelperSleeper$`)
	cmd.Env = append(os.Environ(), "BINKY_SUPERVISOR_SLEEPER=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	root := uint32(cmd.Process.Pid)
	var tree []uint32
	t.Cleanup(func() {
		for _, p := range tree {
			if p != root {
				if pr, err := os.FindProcess(int(p)); err == nil {
					pr.Kill()
				}
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait for cmd.exe to start the sleeper (an event: it appears in the tree).
	deadline := time.Now().Add(time.Minute)
	for len(tree) < 2 && time.Now().Before(deadline) {
		if tree, err = processTree(root); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(tree) < 2 || tree[0] != root || slices.Contains(tree[1:], root) {
		t.Fatalf("processTree(%d) = %v; want the root and the sleeper", root, tree)
	}
	if err := pauseGroup(int(root), true); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	if err := pauseGroup(int(root), false); err != nil {
		t.Fatalf("resume: %v", err)
	}
	// Stop ends the whole tree.
	sleeper, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, tree[1])
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(sleeper)
	if err := signalGroup(int(root), killSignal); err != nil {
		t.Fatalf("signalGroup: %v", err)
	}
	if ev, err := windows.WaitForSingleObject(sleeper, 60000); ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("the sleeper did not end within a minute of the kill: %v %v", ev, err)
	}
	cmd.Wait()
	if groupAlive(int(root)) {
		t.Error("groupAlive after the kill: true")
	}
}

// TestHelperAppender appends a byte to $SUP_APPEND every few milliseconds
// until killed. With $SUP_APPEND_CHILD it first has another of itself
// append to that file, started through a third that exits at once
// ($SUP_APPEND_ORPHAN): in a service, that appender is the service's
// grandchild whose parent is gone, which a process tree walk cannot find
// and the service's job holds.
func TestHelperAppender(t *testing.T) {
	path, orphan := os.Getenv("SUP_APPEND"), os.Getenv("SUP_APPEND_ORPHAN")
	if path == "" && orphan == "" {
		t.Skip("runs only as a child process of TestSuspendThroughJobWindows")
	}
	start := func(env ...string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
		cmd.Env = append(os.Environ(), env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if orphan != "" {
		start("SUP_APPEND="+orphan, "SUP_APPEND_ORPHAN=")
		os.Exit(0)
	}
	if c := os.Getenv("SUP_APPEND_CHILD"); c != "" {
		start("SUP_APPEND=", "SUP_APPEND_ORPHAN="+c, "SUP_APPEND_CHILD=")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for {
		f.Write([]byte("x"))
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSuspendThroughJobWindows: Suspend stops every process in the
// service's job, an orphaned descendant too (out of the process tree's
// reach), and Resume continues them. Progress
// is measured against a control process outside the service, appending
// as they do: while it writes, the suspended files do not grow.
func TestSuspendThroughJobWindows(t *testing.T) {
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{})
	parent, child, control := w.path("parent.out"), w.path("child.out"), w.path("control.out")
	// No ^ in the pattern: cmd.exe would take it for its escape.
	spec := w.spec("api", `"`+os.Args[0]+`" -test.run=TestHelperAppender$`)
	spec.Env = append(os.Environ(), "SUP_APPEND="+parent, "SUP_APPEND_CHILD="+child)
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	ctl := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
	ctl.Env = append(os.Environ(), "SUP_APPEND="+control)
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctl.Process.Kill()
		ctl.Wait()
	})
	size := func(path string) int64 {
		st, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	// waitGrow waits until each of paths is past its size in from.
	waitGrow := func(what string, from map[string]int64, paths ...string) {
		t.Helper()
		deadline := time.Now().Add(hang)
		for {
			grown := 0
			for _, p := range paths {
				if size(p) > from[p] {
					grown++
				}
			}
			if grown == len(paths) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the files did not grow within %s", what, hang)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	sizes := func() map[string]int64 {
		return map[string]int64{parent: size(parent), child: size(child), control: size(control)}
	}
	// controlWrites waits for the control process to append n more bytes.
	controlWrites := func(n int64) {
		t.Helper()
		waitGrow("control", map[string]int64{control: size(control) + n - 1}, control)
	}
	waitGrow("before suspend", map[string]int64{}, parent, child, control)
	if err := s.Suspend(spec.Key); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	controlWrites(5) // a write in flight when the suspend came has landed
	before := sizes()
	controlWrites(20)
	after := sizes()
	for _, p := range []string{parent, child} {
		if after[p] != before[p] {
			t.Errorf("suspended, %s grew from %d to %d bytes while the control wrote %d", p, before[p], after[p], after[control]-before[control])
		}
	}
	if err := s.Resume(spec.Key); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitGrow("after resume", after, parent, child)
	if st, _ := s.State(spec.Key); st.Restarts != 0 {
		t.Errorf("after suspend and resume: %d restarts; want none", st.Restarts)
	}
}

// TestParseSignalWindows: every stop_signal host/config accepts also starts
// on Windows: SIGKILL is the job's termination, every other one
// CTRL_BREAK_EVENT (ctrlBreak).
func TestParseSignalWindows(t *testing.T) {
	for _, name := range []string{"SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "usr2", "15", "int"} {
		if sig, err := ParseSignal(name); err != nil || sig != ctrlBreak {
			t.Errorf("ParseSignal(%q) = %v, %v; want CTRL_BREAK_EVENT (%v)", name, sig, err, ctrlBreak)
		}
	}
	for _, name := range []string{"SIGKILL", "kill", "9"} {
		if sig, err := ParseSignal(name); err != nil || sig != syscall.SIGKILL {
			t.Errorf("ParseSignal(%q) = %v, %v; want SIGKILL", name, sig, err)
		}
	}
	if _, err := ParseSignal("SIGWINCH"); err == nil {
		t.Error("ParseSignal(SIGWINCH): no error")
	}
}
