//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// execBinkyd runs binkyd with this process's stdio and returns its exit
// status (Windows has no exec). Ctrl-C reaches binkyd through the shared
// console; binky only waits for it to finish.
func execBinkyd(bin string, args []string) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "binky: run %s: %v\n", bin, err)
		return 1
	}
	return 0
}
