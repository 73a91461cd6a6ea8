package tunnel

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/remote"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/testlog"
)

// fakeSSH stands in for OpenSSH's client and its master.
type fakeSSH struct {
	mu       sync.Mutex
	alive    bool
	failNext int // master starts that fail before one works
	starts   int
	forwards map[string]bool
	exits    int
}

func (f *fakeSSH) Run(_ context.Context, argv []string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	op := ""
	for i, a := range argv {
		if a == "-O" {
			op = argv[i+1]
		}
	}
	spec := ""
	for i, a := range argv {
		if a == "-L" {
			spec = argv[i+1]
		}
	}
	switch op {
	case "":
		if !slices.Contains(argv, "-N") {
			return "", errors.New("unexpected ssh command")
		}
		f.starts++
		if f.failNext > 0 {
			f.failNext--
			return "ssh: connect to host box port 22: Connection refused", errors.New("exit status 255")
		}
		f.alive = true
		return "", nil
	case "check":
		if !f.alive {
			return "Control socket connect: No such file or directory", errors.New("exit status 255")
		}
		return "Master running (pid=4242)", nil
	case "forward":
		if !f.alive {
			return "", errors.New("exit status 255")
		}
		f.forwards[spec] = true
	case "cancel":
		delete(f.forwards, spec)
	case "exit":
		f.alive = false
		f.forwards = map[string]bool{}
		f.exits++
	}
	return "", nil
}

// kill is the master dying: its forwards go with it.
func (f *fakeSSH) kill(failNext int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.alive = false
	f.forwards = map[string]bool{}
	f.failNext = failNext
}

func (f *fakeSSH) state() (alive bool, fwds []string, starts, exits int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.forwards {
		fwds = append(fwds, k)
	}
	slices.Sort(fwds)
	return f.alive, fwds, f.starts, f.exits
}

type fakePorts struct {
	mu       sync.Mutex
	released int
}

func (p *fakePorts) Reserve(context.Context, string, int) (int, int, error) { return 4100, 4163, nil }
func (p *fakePorts) Release(context.Context, string) error {
	p.mu.Lock()
	p.released++
	p.mu.Unlock()
	return nil
}

type fakeHost struct {
	mu     sync.Mutex
	worlds []api.World
}

func (h *fakeHost) list(context.Context) (*api.StatusResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &api.StatusResult{Worlds: slices.Clone(h.worlds)}, nil
}

func (h *fakeHost) set(w ...api.World) {
	h.mu.Lock()
	h.worlds = w
	h.mu.Unlock()
}

func upWorld() api.World {
	return api.World{Project: "acme", Worktree: "feat", State: state.WorldUp, Services: []api.Service{
		{Name: "web", Kind: "cmd", State: state.ServiceRunning, Port: 5001, URL: "http://web.feat.acme.localhost:8080"},
		{Name: "db", Kind: "adapter", State: state.ServiceProvisioned, Address: "postgres://u:***@127.0.0.1:5432/acme_feat"},
	}}
}

func newTest(t *testing.T) (*Manager, *fakeSSH, *fakeHost, *fakePorts, *[]time.Duration) {
	t.Helper()
	ssh := &fakeSSH{forwards: map[string]bool{}}
	host := &fakeHost{}
	ports := &fakePorts{}
	var waitsMu sync.Mutex
	waits := &[]time.Duration{}
	m := &Manager{Open: func(name string) (Options, error) {
		return Options{
			Host: &remote.Host{Name: name, SSH: "box", Addr: "box"}, Home: t.TempDir(),
			Runner: ssh, List: host.list, Ports: ports,
			Check: time.Millisecond, Poll: time.Hour,
			EndMaster: func(int) {}, // the fake's pid is no process of ours
			Wait: func(ctx context.Context, d time.Duration) error {
				waitsMu.Lock()
				*waits = append(*waits, d)
				waitsMu.Unlock()
				return ctx.Err()
			},
		}, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	t.Cleanup(func() { cancel(); m.Close() })
	return m, ssh, host, ports, waits
}

// testLogger writes what a manager logs into the test's log.
func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: testlog.Writer(t), Level: hclog.Debug})
}

// eventually waits for cond, which the tunnel's loop makes true on its own.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 20000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

func TestAttachForwardsAndRoutes(t *testing.T) {
	m, ssh, host, ports, _ := newTest(t)
	host.set(upWorld())
	snap, err := m.Attach(context.Background(), "box")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Up || snap.Forwards[5001] == 0 || snap.Forwards[5432] == 0 {
		t.Fatalf("snapshot %+v; want up with forwards of 5001 and 5432", snap)
	}
	_, fwds, _, _ := ssh.state()
	if got, want := strings.Join(fwds, " "), "127.0.0.1:4100:127.0.0.1:5001 127.0.0.1:4101:127.0.0.1:5432"; got != want {
		t.Fatalf("forwards %q; want %q", got, want)
	}
	rs := m.Routes()
	if len(rs) != 1 || rs[0].Host != "web.feat.acme.localhost" || rs[0].Target != "127.0.0.1:4100" || rs[0].State != proxy.StateRunning || rs[0].Remote != "box" {
		t.Fatalf("routes %+v; want web.feat.acme.localhost → 127.0.0.1:4100 running, remote box", rs)
	}
	// The world goes down on the host: nothing is left here.
	w := upWorld()
	w.State = state.WorldDown
	host.set(w)
	if _, err := m.Attach(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tunnel ends", func() bool { return len(m.Snapshots()) == 0 })
	alive, fwds, _, exits := ssh.state()
	if alive || len(fwds) != 0 || exits == 0 {
		t.Fatalf("after down: master alive %v, forwards %v, exits %d; want none left", alive, fwds, exits)
	}
	if len(m.Routes()) != 0 {
		t.Fatalf("routes %+v after down; want none", m.Routes())
	}
	ports.mu.Lock()
	released := ports.released
	ports.mu.Unlock()
	if released != 1 {
		t.Fatalf("ports released %d times; want 1", released)
	}
	// Up again on the host: a new tunnel, the same forwards.
	host.set(upWorld())
	snap, err = m.Attach(context.Background(), "box")
	if err != nil || !snap.Up || snap.Forwards[5001] != 4100 {
		t.Fatalf("attach after the tunnel ended: %+v, %v; want up with 5001 → 4100", snap, err)
	}
}

func TestReconnectWithBackoff(t *testing.T) {
	m, ssh, host, _, waits := newTest(t)
	host.set(upWorld())
	if _, err := m.Attach(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	// The master dies and the host refuses four times before it answers.
	ssh.kill(4)
	eventually(t, "the master is back with its forwards", func() bool {
		alive, fwds, _, _ := ssh.state()
		return alive && len(fwds) == 2
	})
	_, fwds, starts, _ := ssh.state()
	if got, want := strings.Join(fwds, " "), "127.0.0.1:4100:127.0.0.1:5001 127.0.0.1:4101:127.0.0.1:5432"; got != want {
		t.Fatalf("forwards after reconnect %q; want the same local ports %q", got, want)
	}
	if starts != 6 {
		t.Fatalf("master started %d times; want 6 (1 + 4 refused + 1)", starts)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
	if !slices.Equal(*waits, want) {
		t.Fatalf("backoff %v; want %v", *waits, want)
	}
	eventually(t, "the route runs again", func() bool {
		rs := m.Routes()
		return len(rs) == 1 && rs[0].State == proxy.StateRunning
	})
}

func TestRoutesSayReconnectingWhileDown(t *testing.T) {
	m, ssh, host, _, _ := newTest(t)
	host.set(upWorld())
	if _, err := m.Attach(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	// The host stays away: the route stays, and says so.
	ssh.kill(1 << 30)
	eventually(t, "the route says reconnecting", func() bool {
		rs := m.Routes()
		return len(rs) == 1 && rs[0].State == proxy.StateReconnecting && rs[0].Remote == "box" && rs[0].Host == "web.feat.acme.localhost"
	})
}

func TestBackoffCaps(t *testing.T) {
	m, ssh, host, _, waits := newTest(t)
	host.set(upWorld())
	ssh.kill(12)
	_, _ = m.Attach(context.Background(), "box")
	eventually(t, "connected", func() bool { alive, _, _, _ := ssh.state(); return alive })
	for i, d := range *waits {
		if d > DefaultMaxBackoff {
			t.Fatalf("wait %d is %v; want at most %v", i, d, DefaultMaxBackoff)
		}
	}
	if got := (*waits)[len(*waits)-1]; got != DefaultMaxBackoff {
		t.Fatalf("last wait %v; want the cap %v", got, DefaultMaxBackoff)
	}
}

// The hosts reached are kept across a daemon's restart, and forgotten
// with their last world.
func TestAttachedHostsKept(t *testing.T) {
	m, ssh, host, _, _ := newTest(t)
	file := filepath.Join(t.TempDir(), AttachedFile)
	m.Attached = file
	m.Logger = testLogger(t)
	host.set(upWorld())
	if _, err := m.Attach(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	if got := readAttached(file); !slices.Equal(got, []string{"box"}) {
		t.Fatalf("hosts kept %v; want [box]", got)
	}
	// A stopping daemon keeps them.
	m.Close()
	if got := readAttached(file); !slices.Equal(got, []string{"box"}) {
		t.Fatalf("after close, hosts kept %v; want [box]", got)
	}
	// A new one reaches them again by itself.
	m2 := &Manager{Open: m.Open, Attached: file, Logger: testLogger(t)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m2.Close() })
	m2.Start(ctx)
	eventually(t, "the host reached again at start", func() bool {
		s := m2.Snapshots()
		return len(s) == 1 && s[0].Up && s[0].Forwards[5001] != 0
	})
	_, fwds, _, _ := ssh.state()
	if len(fwds) != 2 {
		t.Fatalf("forwards after start %v; want 2", fwds)
	}
	// Its last world goes: forgotten.
	host.set()
	if _, err := m2.Attach(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the host forgotten", func() bool { return len(readAttached(file)) == 0 })
}
