package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/binkyhq/binky/sdk"
)

// grandchildEnv makes the test binary a grandchild of a test: a process
// the fake adapter "spawn" starts, which writes its pid to the file the
// variable names and sleeps.
const grandchildEnv = "BINKY_CLIENT_GRANDCHILD"

// pidDirEnv is where the "spawn" adapter's grandchildren write their pids.
const pidDirEnv = "BINKY_CLIENT_PIDDIR"

// runGrandchild writes this process's pid to pidfile and sleeps.
func runGrandchild(pidfile string) int {
	if err := os.WriteFile(pidfile+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return 1
	}
	if err := os.Rename(pidfile+".tmp", pidfile); err != nil {
		return 1
	}
	time.Sleep(time.Hour)
	return 0
}

// spawner is the fake adapter "spawn": resolve starts a grandchild that
// writes its pid to <$BINKY_CLIENT_PIDDIR>/<slice>.pid, waits for it and
// answers "pid://<pid>"; a slice named "hang…" then hangs.
type spawner struct{ echo }

func (spawner) Resolve(ctx context.Context, r *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	pidfile := filepath.Join(os.Getenv(pidDirEnv), r.Slice+".pid")
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), grandchildEnv+"="+pidfile)
	if err := c.Start(); err != nil { // stdio on NUL: it holds no pipe
		return nil, err
	}
	pid, err := readPidFile(ctx, pidfile)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(r.Slice, "hang") {
		time.Sleep(time.Hour)
	}
	return &sdk.ResolveResponse{Address: fmt.Sprintf("pid://%d", pid)}, nil
}

// readPidFile waits for pidfile to be written and reads it.
func readPidFile(ctx context.Context, pidfile string) (int, error) {
	for {
		if b, err := os.ReadFile(pidfile); err == nil {
			return strconv.Atoi(string(b))
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no pid in %s: %w", pidfile, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
