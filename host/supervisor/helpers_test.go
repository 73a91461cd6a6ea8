package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/internal/testlog"
)

// hang is how long a test waits for something that must happen before it
// calls it a failure. It guards against hangs; it is not a speed assertion.
const hang = 30 * time.Second

// recorder is a Store and an event sink that remembers everything.
type recorder struct {
	mu      sync.Mutex
	started []Record
	exits   map[Key][]Exit
	events  []Event
	notify  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{exits: map[Key][]Exit{}, notify: make(chan struct{}, 1)}
}

func (r *recorder) ProcessStarted(rec Record) error {
	r.mu.Lock()
	r.started = append(r.started, rec)
	r.mu.Unlock()
	r.poke()
	return nil
}

func (r *recorder) ProcessExited(key Key, e Exit) error {
	r.mu.Lock()
	r.exits[key] = append(r.exits[key], e)
	r.mu.Unlock()
	r.poke()
	return nil
}

func (r *recorder) onEvent(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) poke() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// until waits for cond (checked under the lock) or fails the test.
func (r *recorder) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(hang)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			names := r.eventNames(Key{})
			r.mu.Unlock()
			t.Fatalf("waited %s for %s; events so far: %v", hang, what, names)
		}
	}
}

// count returns how many events named name were seen for key (any key if zero).
func (r *recorder) count(name string, key Key) int {
	n := 0
	for _, ev := range r.events {
		if ev.Name == name && (key == Key{} || ev.Key == key) {
			n++
		}
	}
	return n
}

func (r *recorder) find(name string, key Key) []Event {
	var out []Event
	for _, ev := range r.events {
		if ev.Name == name && (key == Key{} || ev.Key == key) {
			out = append(out, ev)
		}
	}
	return out
}

func (r *recorder) eventNames(key Key) []string {
	var out []string
	for _, ev := range r.events {
		if key == (Key{}) || ev.Key == key {
			out = append(out, ev.Name)
		}
	}
	return out
}

func (r *recorder) waitEvent(t *testing.T, name string, key Key, n int) {
	t.Helper()
	r.until(t, name, func() bool { return r.count(name, key) >= n })
}

// fastPolicy restarts at once and never resets, for crash-loop tests.
var fastPolicy = Policy{Base: time.Millisecond, Cap: 4 * time.Millisecond, Stable: time.Hour, GiveUpAfter: 5}

func newSup(t *testing.T, rec *recorder, opts Options) *Supervisor {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testlog.Writer(t)})
	}
	if rec != nil {
		opts.Store = rec
		opts.OnEvent = rec.onEvent
	}
	if opts.Jitter == nil {
		opts.Jitter = func() float64 { return 0 }
	}
	s := New(opts)
	t.Cleanup(func() { stopAll(t, s) })
	return s
}

// stopAll stops every service and shuts the supervisor down.
func stopAll(t *testing.T, s *Supervisor) {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	for _, st := range s.Statuses() {
		_ = s.Stop(ctx, st.Key)
	}
	s.Shutdown()
}

// world is a temporary BINKY_HOME (the supervisor reads no environment; the
// logs live under it) with a worktree directory in it.
type world struct {
	home, dir, project string
}

// worldSeq makes each world's project name unique, so that the environment
// marker (and so escape detection) never mixes up parallel tests.
var worldSeq atomic.Int64

func newWorld(t *testing.T) world {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "wt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf("t%d-%d", os.Getpid(), worldSeq.Add(1))
	return world{home: home, dir: dir, project: project}
}

func (w world) spec(name, command string) Spec {
	return Spec{
		Key:     Key{Project: w.project, Worktree: "wt", Service: name},
		Command: command,
		Dir:     w.dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "BINKY_HOME=" + w.home},
		LogPath: filepath.Join(w.home, "logs", w.project, "wt", name+".log"),
	}
}

func (w world) path(name string) string { return filepath.Join(w.dir, name) }

// readPid reads a pid a test service wrote into a file, waiting for it.
func (w world) readPid(t *testing.T, name string) int {
	t.Helper()
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(w.path(name))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			var pid int
			for _, c := range strings.TrimSpace(string(b)) {
				pid = pid*10 + int(c-'0')
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s after %s", name, hang)
	return 0
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
