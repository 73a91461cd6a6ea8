//go:build !windows

package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/world"
)

// guard is how long a test waits for something that must happen before it
// calls it a hang: it detects a hang, it times nothing.
const guard = time.Minute

// syncBuffer is a bytes.Buffer safe from many goroutines (the daemon log).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually polls cond until it holds, failing as a hang after guard.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("hang: %s did not happen within %s", what, guard)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitErr waits for an op's outcome, failing as a hang after guard.
func awaitErr(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(guard):
		t.Fatalf("hang: %s did not end within %s", what, guard)
		return nil
	}
}

// stallFixture is a daemon running in this process on a temp home, and a
// repository whose main worktree is the world "main" of project "stall":
// one cmd service, no ports.
type stallFixture struct {
	d      *Daemon
	home   string
	repo   string
	log    *syncBuffer
	cancel context.CancelFunc
	ran    chan error
}

func newStallFixture(t *testing.T) *stallFixture {
	t.Helper()
	for _, tool := range []string{"git", "sh", "yes", "head"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH: CI must have it", tool)
			}
			t.Skipf("skipped: %s is not on PATH", tool)
		}
	}
	t.Setenv("BINKY_PORT_LEASES", t.TempDir())
	f := &stallFixture{home: t.TempDir(), repo: t.TempDir(), log: &syncBuffer{}, ran: make(chan error, 1)}
	toml := "[project]\nname = \"stall\"\n\n[services.api]\ncmd = \"exec sleep 600\"\n"
	if err := os.WriteFile(filepath.Join(f.repo, "binky.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = f.repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	logger := hclog.New(&hclog.LoggerOptions{Output: f.log, Level: hclog.Info})
	f.d = New(Options{Home: f.home, Logger: logger, ProxyAddr: "off", TrimAfter: -1, NoCgroups: true})
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() { f.ran <- f.d.Run(ctx) }()
	t.Cleanup(func() {
		// Stop the daemon (if the test did not), then what the world left.
		cancel()
		select {
		case <-f.ran:
		case <-time.After(guard):
			t.Errorf("hang: the daemon did not stop within %s", guard)
		}
		if f.d.homeID != "" {
			supervisor.EndMarked(supervisor.WorldMarker(f.d.homeID, "stall", "main"), syscall.SIGTERM, 10*time.Second)
		}
	})
	eventually(t, "the daemon to answer", func() bool {
		return f.client().Call(ctx, api.OpPing, nil, api.Handlers{}, nil) == nil
	})
	return f
}

func (f *stallFixture) client() *api.Client { return &api.Client{Home: f.home} }

func (f *stallFixture) upArgs() api.UpArgs {
	return api.UpArgs{Dir: f.repo, Env: api.EnvMap(os.Environ())}
}

// stalledCall sends op with args on a fresh connection to the daemon and
// never reads the reply.
func (f *stallFixture) stalledCall(t *testing.T, op string, args any) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", api.Socket(f.home))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	raw, _ := json.Marshal(args)
	line, _ := json.Marshal(api.Request{Op: op, Args: raw})
	if _, err := c.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStalledUpFreezesNothing: an up whose caller stops reading while the
// up holds the world's lock does not hold the world: a down of the same
// world from another client is told what it waits for ("waiting for the
// up of main started N s ago"), and once the up's write runs out of time
// the up finishes, releases the lock, and the down completes.
//
// The up runs on a stream onto a net.Pipe (no buffer), read until the up
// has started its service (it holds the lock then), then never again. Its
// write bound is an hour until the down is seen waiting, then a moment: the
// test picks when the deadline falls, so the down surely waits behind the
// stalled up; what frees the world is the deadline, not a reader.
func TestStalledUpFreezesNothing(t *testing.T) {
	f := newStallFixture(t)
	daemonEnd, callerEnd := net.Pipe()
	t.Cleanup(func() { daemonEnd.Close(); callerEnd.Close() })
	s := world.NewStream(daemonEnd, f.d.redact.String)
	s.SetWait(time.Hour)
	upArgs, _ := json.Marshal(f.upArgs())
	upDone := make(chan error, 1)
	go func() {
		_, err := f.d.handlers[api.OpUp](context.Background(), upArgs, s)
		upDone <- err
	}()
	frames := json.NewDecoder(callerEnd)
	for {
		var fr api.Frame
		if err := frames.Decode(&fr); err != nil {
			t.Fatalf("read the up's frames: %v", err)
		}
		if fr.Progress != nil && fr.Progress.Step == "start" {
			break // the up holds the world's lock; read no more
		}
		if fr.Error != nil {
			t.Fatalf("up: %v", fr.Error)
		}
	}
	if h, held := f.d.w.WorldLock("stall", "main").Holder(); !held || h.Op != "up" {
		t.Fatalf("the world's lock is held by %+v (held %v); want the up", h, held)
	}

	var mu sync.Mutex
	var told []string
	downDone := make(chan error, 1)
	go func() {
		var w api.World
		err := f.client().Call(context.Background(), api.OpDown, api.DownArgs{WorldRef: api.WorldRef{Name: "main", Dir: f.repo}}, api.Handlers{Progress: func(p api.Progress) {
			mu.Lock()
			told = append(told, p.Step+": "+p.Message)
			mu.Unlock()
		}}, &w)
		if err == nil && w.State != "down" {
			err = fmt.Errorf("down answered state %q; want down", w.State)
		}
		downDone <- err
	}()
	eventually(t, "the down to be told what it waits for", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range told {
			if strings.HasPrefix(m, "lock: waiting for the up of main started ") && strings.HasSuffix(m, " s ago") {
				return true
			}
		}
		return false
	})

	s.SetWait(10 * time.Millisecond)
	if err := awaitErr(t, "the up whose caller stopped reading", upDone); err != nil {
		t.Fatalf("the up whose caller stopped reading: %v", err)
	}
	if !s.Stalled() {
		t.Error("the up's stream is not marked stalled")
	}
	if err := awaitErr(t, "the down behind the stalled up", downDone); err != nil {
		t.Fatalf("the down behind the stalled up: %v", err)
	}
}

// TestStalledRunFreezesNothing: a run whose command prints 50 MB to a
// caller that never reads (over the real socket: its buffer fills) loses
// its stream within FrameWait: its command ends, its job place is given
// back, and a down of the world from another client completes. A second
// such run does not hold the daemon's stop.
func TestStalledRunFreezesNothing(t *testing.T) {
	f := newStallFixture(t)
	if err := f.client().Call(context.Background(), api.OpUp, f.upArgs(), api.Handlers{}, nil); err != nil {
		t.Fatalf("up: %v", err)
	}
	run := api.RunArgs{WorldRef: api.WorldRef{Name: "main", Dir: f.repo, Env: api.EnvMap(os.Environ())}, Command: "yes | head -c 50000000"}
	c := f.stalledCall(t, api.OpRun, run)
	eventually(t, "the run to take a job place", func() bool { return f.d.adm.Jobs().Running == 1 })
	// The down comes once the run's output fills the caller's socket: the
	// run's stream is then in a write that nobody reads. A down sent
	// earlier could end the command before its output filled the buffer
	// (a busy machine starts yes late), and a stream that never waits
	// never stalls: the test then waited for a stall that could not come.
	eventually(t, "the run's output to fill the caller's socket", func() bool { return unreadBytes(t, c) >= 64<<10 })

	downDone := make(chan error, 1)
	go func() {
		downDone <- f.client().Call(context.Background(), api.OpDown, api.DownArgs{WorldRef: api.WorldRef{Name: "main", Dir: f.repo}}, api.Handlers{}, nil)
	}()
	if err := awaitErr(t, "a down beside the stalled run", downDone); err != nil {
		t.Fatalf("a down beside the stalled run: %v", err)
	}
	eventually(t, "the stalled run to end and give its job place back", func() bool {
		return strings.Contains(f.log.String(), "a caller stopped reading") && f.d.adm.Jobs().Running == 0
	})

	// A second stalled run, then the daemon stops: it waits for no caller.
	if err := f.client().Call(context.Background(), api.OpUp, f.upArgs(), api.Handlers{}, nil); err != nil {
		t.Fatalf("up again: %v", err)
	}
	f.stalledCall(t, api.OpRun, run)
	eventually(t, "the second run to take a job place", func() bool { return f.d.adm.Jobs().Running == 1 })
	f.cancel()
	if err := awaitErr(t, "the daemon's stop beside a stalled run", f.ran); err != nil {
		t.Fatalf("daemon run: %v", err)
	}
	f.ran <- nil // for the cleanup
}
