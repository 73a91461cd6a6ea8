package client

import (
	"os/exec"
	"time"
)

// startTries bounds the starts of one adapter process that fail in a way
// startAgain says nothing ran (Wine's loader, job_windows.go).
const startTries = 3

// startRetrying starts the command mk makes with start (a job's start),
// and makes and starts another, after a short pause, while the start
// fails in a way that ran nothing of the adapter (startAgain); a command
// cannot be started twice, hence mk. It returns the command it started,
// or the last one and its error.
func startRetrying(start func(*exec.Cmd) error, mk func() *exec.Cmd) (*exec.Cmd, error) {
	for try := 1; ; try++ {
		cmd := mk()
		err := start(cmd)
		if err == nil || !startAgain(err) || try == startTries {
			return cmd, err
		}
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
	}
}
