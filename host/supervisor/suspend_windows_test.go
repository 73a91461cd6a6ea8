//go:build windows

package supervisor

import (
	"context"
	"os"
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
