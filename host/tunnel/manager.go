package tunnel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/proxy"
)

// Manager holds the tunnels of one home, one per host that has worlds.
type Manager struct {
	// Open makes the tunnel options of a host (hosts.toml looked up, the
	// status road, the port block); Changed is filled in by the manager.
	Open    func(host string) (Options, error)
	Changed func()
	// Attached is the file that keeps the hosts reached (AttachedFile
	// under BINKY_HOME); "" keeps none.
	Attached string
	// Logger hears of a host that could not be reached again at start.
	Logger hclog.Logger

	mu      sync.Mutex
	fileMu  sync.Mutex
	ctx     context.Context
	tunnels map[string]*running
	wg      sync.WaitGroup
}

type running struct {
	t      *Tunnel
	cancel context.CancelFunc
	done   chan struct{}
}

// Start sets the context the tunnels run under (the daemon's) and, in
// the background, reaches again the hosts the file names.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	m.ctx = ctx
	m.mu.Unlock()
	if m.Attached == "" {
		return
	}
	for _, h := range readAttached(m.Attached) {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			if _, err := m.Attach(ctx, h); err != nil && m.Logger != nil && ctx.Err() == nil {
				m.Logger.Warn("reach a host again at start", "host", h, "error", err)
			}
		}()
	}
}

// remember adds or (gone) removes host in the file of hosts reached.
func (m *Manager) remember(host string, gone bool) {
	if m.Attached == "" {
		return
	}
	m.fileMu.Lock()
	defer m.fileMu.Unlock()
	hosts := readAttached(m.Attached)
	has := slices.Contains(hosts, host)
	switch {
	case gone && has:
		hosts = slices.DeleteFunc(hosts, func(h string) bool { return h == host })
	case !gone && !has:
		hosts = append(hosts, host)
	default:
		return
	}
	if err := writeAttached(m.Attached, hosts); err != nil && m.Logger != nil {
		m.Logger.Warn("record the hosts reached", "file", m.Attached, "error", err)
	}
}

// Attach starts host's tunnel when none runs, has it read the host's
// worlds now and returns what it holds. A host with no world reached
// from here has no tunnel afterwards (Snapshot.Worlds is empty).
func (m *Manager) Attach(ctx context.Context, host string) (Snapshot, error) {
	r, err := m.tunnel(host)
	if err != nil {
		return Snapshot{}, err
	}
	err = r.t.Sync(ctx)
	if errors.Is(err, ErrEnded) {
		// It ended as it was handed out (its host had just lost its
		// last world): a new one reads the host again.
		<-r.done
		if r, err = m.tunnel(host); err != nil {
			return Snapshot{}, err
		}
		err = r.t.Sync(ctx)
		if errors.Is(err, ErrEnded) {
			// The new one read the host and found no world to reach
			// either: it ends as it should, and the host is forgotten.
			<-r.done
			return Snapshot{Host: host}, nil
		}
	}
	select {
	case <-r.done:
		return Snapshot{Host: host}, nil
	default:
	}
	return r.t.Snapshot(), err
}

func (m *Manager) tunnel(host string) (*running, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil {
		return nil, fmt.Errorf("the tunnels are not started")
	}
	if r, ok := m.tunnels[host]; ok {
		select {
		case <-r.done:
		default:
			return r, nil
		}
	}
	o, err := m.Open(host)
	if err != nil {
		return nil, err
	}
	o.Changed = m.changed
	ctx, cancel := context.WithCancel(m.ctx)
	r := &running{t: New(o), cancel: cancel, done: make(chan struct{})}
	if m.tunnels == nil {
		m.tunnels = map[string]*running{}
	}
	m.tunnels[host] = r
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(r.done)
		m.remember(host, false)
		if r.t.Run(ctx) == nil {
			// The host has no world left here (not a stopping daemon).
			m.remember(host, true)
		}
		m.mu.Lock()
		if m.tunnels[host] == r {
			delete(m.tunnels, host)
		}
		m.mu.Unlock()
		m.changed()
	}()
	return r, nil
}

func (m *Manager) changed() {
	if m.Changed != nil {
		m.Changed()
	}
}

// Routes are every tunnel's routes.
func (m *Manager) Routes() []proxy.Route {
	var out []proxy.Route
	for _, r := range m.list() {
		out = append(out, r.t.Routes()...)
	}
	return out
}

// Snapshots are every tunnel's state, by host name.
func (m *Manager) Snapshots() []Snapshot {
	var out []Snapshot
	for _, r := range m.list() {
		out = append(out, r.t.Snapshot())
	}
	slices.SortFunc(out, func(a, b Snapshot) int {
		if a.Host < b.Host {
			return -1
		}
		if a.Host > b.Host {
			return 1
		}
		return 0
	})
	return out
}

func (m *Manager) list() []*running {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*running, 0, len(m.tunnels))
	for _, r := range m.tunnels {
		out = append(out, r)
	}
	return out
}

// Close ends every tunnel (forwards cancelled, masters ended) and waits.
func (m *Manager) Close() {
	for _, r := range m.list() {
		r.cancel()
	}
	m.wg.Wait()
}
