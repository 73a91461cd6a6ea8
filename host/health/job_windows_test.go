//go:build windows

package health

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestHelperProbe is the command of TestExecProbeEndsItsJob: "spawn" starts
// a "linger" of itself, which writes its pid to $HEALTH_PIDFILE and sleeps,
// and exits 0 once that pid is written.
func TestHelperProbe(t *testing.T) {
	pidfile := os.Getenv("HEALTH_PIDFILE")
	switch os.Getenv("HEALTH_HELPER") {
	case "spawn":
		c := exec.Command(os.Args[0], "-test.run=^TestHelperProbe$")
		c.Env = append(os.Environ(), "HEALTH_HELPER=linger")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		for _, err := os.Stat(pidfile); err != nil; _, err = os.Stat(pidfile) {
			time.Sleep(10 * time.Millisecond)
		}
		os.Exit(0)
	case "linger":
		os.WriteFile(pidfile+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600)
		os.Rename(pidfile+".tmp", pidfile)
		time.Sleep(time.Hour)
	default:
		t.Skip("runs only as the command of TestExecProbeEndsItsJob")
	}
}

// TestExecProbeEndsItsJob: what an exec probe leaves running dies with it
// (its job kills on close).
func TestExecProbeEndsItsJob(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	env := append(os.Environ(), "HEALTH_HELPER=spawn", "HEALTH_PIDFILE="+pidfile)
	p := Probe{Exec: `"` + os.Args[0] + `" -test.run=TestHelperProbe`, Env: env, Timeout: time.Minute}
	if err := Check(context.Background(), p); err != nil {
		t.Fatalf("Check: %v", err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return // gone
	}
	defer windows.CloseHandle(h)
	if ev, _ := windows.WaitForSingleObject(h, 30000); ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(h, 1)
		t.Fatal("the probe's grandchild outlived it")
	}
}
