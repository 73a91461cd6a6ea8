package client

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/windows"
)

// TestStartAgainAfterLoaderDeath: a start that fails as Wine's does when
// the new process dies in its loader (ERROR_INTERNAL_ERROR) is made and
// started again with a new command, and the command that ran is the one
// returned; any other failure is final at once; the tries are bounded.
func TestStartAgainAfterLoaderDeath(t *testing.T) {
	loaderDied := &os.PathError{Op: "fork/exec", Path: "adapter.exe", Err: windows.ERROR_INTERNAL_ERROR}
	var made []*exec.Cmd
	mk := func() *exec.Cmd {
		c := exec.Command(os.Args[0], "-test.run=^$")
		made = append(made, c)
		return c
	}
	failOnce := func(c *exec.Cmd) error {
		if len(made) == 1 {
			return loaderDied
		}
		return c.Start()
	}
	cmd, err := startRetrying(failOnce, mk)
	if err != nil {
		t.Fatalf("after one loader death: %v", err)
	}
	if len(made) != 2 || cmd != made[1] || cmd.Process == nil {
		t.Fatalf("made %d commands; want the second one started and returned", len(made))
	}
	_ = cmd.Wait()

	made = nil
	notFound := &os.PathError{Op: "fork/exec", Path: "adapter.exe", Err: windows.ERROR_FILE_NOT_FOUND}
	if _, err := startRetrying(func(*exec.Cmd) error { return notFound }, mk); !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || len(made) != 1 {
		t.Fatalf("a missing file: %v after %d tries; want it at once", err, len(made))
	}

	made = nil
	if _, err := startRetrying(func(*exec.Cmd) error { return loaderDied }, mk); !errors.Is(err, windows.ERROR_INTERNAL_ERROR) || len(made) != startTries {
		t.Fatalf("always dying: %v after %d tries; want its error after %d", err, len(made), startTries)
	}
}
