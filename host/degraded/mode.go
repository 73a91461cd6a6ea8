package degraded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
)

// Retry is how often a degraded daemon checks whether its home takes
// writes again.
const Retry = 5 * time.Second

// Finisher finishes, once the home takes data again, what the daemon's
// start skipped besides home.id (the event log), and records what the
// supervisor learned while nothing could be written.
type Finisher interface {
	FinishStart(ctx context.Context) error
}

// Mode is a daemon's degraded state.
type Mode struct {
	home   string
	reg    *registry.Registry
	finish Finisher
	log    hclog.Logger

	check sync.Mutex // one check (and one way out) at a time

	mu    sync.Mutex
	why   *registry.UnwritableError // nil: not degraded
	since time.Time
	// homeID is the id still to be written to home.id; "" when written.
	homeID string
}

// New returns the degraded mode of the daemon of home, whose registry is
// reg; finish is called on the way out.
func New(home string, reg *registry.Registry, finish Finisher, log hclog.Logger) *Mode {
	return &Mode{home: home, reg: reg, finish: finish, log: log}
}

// Message is what status shows and every refused verb answers, in words
// that stay the same: scripts and agents may match them.
func (m *Mode) Message(why *registry.UnwritableError) string {
	home := m.home
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	until := "until space is freed"
	if why.Kind == registry.ReadOnlyFS {
		until = "until its file system is writable again"
	}
	return fmt.Sprintf("binky's home %s is %s; the daemon supervises running worlds but refuses new work %s", home, why.Condition(), until)
}

// Degraded returns why the daemon is degraded, and since when; nil when
// it is not.
func (m *Mode) Degraded() (*registry.UnwritableError, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.why, m.since
}

// degrade enters (or stays in) degraded mode for why.
func (m *Mode) degrade(why *registry.UnwritableError) {
	m.mu.Lock()
	was := m.why
	m.why = why
	if was == nil {
		m.since = time.Now()
	}
	m.mu.Unlock()
	if was == nil {
		m.log.Warn("degraded: " + m.Message(why))
	}
}

// unwritableHome reports why the home takes no new data, from err (the
// failure of a write the daemon made) and a probe of the home; nil when
// err has another cause.
func (m *Mode) unwritableHome(err error) *registry.UnwritableError {
	var why *registry.UnwritableError
	if errors.As(err, &why) {
		return why
	}
	if errors.As(registry.Unwritable(m.home), &why) {
		return why
	}
	return nil
}

// Start decides at start whether the daemon runs degraded: its registry
// opened read-only, or its home takes no new data.
func (m *Mode) Start() {
	var why *registry.UnwritableError
	if errors.As(m.reg.ReadOnly(), &why) || errors.As(registry.Unwritable(m.home), &why) {
		m.degrade(why)
	}
}

// Tolerate is how the start treats a failed write: on an unwritable home
// it is logged, degraded mode entered, and true returned (carry on); any
// other failure is the caller's to return.
func (m *Mode) Tolerate(what string, err error) bool {
	why := m.unwritableHome(err)
	if why == nil {
		return false
	}
	m.degrade(why)
	m.log.Warn("skipped at start; done once the home takes data again", "step", what, "error", err)
	return true
}

// HomeID mirrors the home's id into home.id (ports.WriteHomeID); on a
// home that takes no new data it is written on the way out instead.
func (m *Mode) HomeID(id string) error {
	if err := ports.WriteHomeID(m.home, id); err != nil {
		if !m.Tolerate("record the home id", err) {
			return err
		}
		m.mu.Lock()
		m.homeID = id
		m.mu.Unlock()
	}
	return nil
}

// Check checks whether the home takes data again, and leaves degraded
// mode when it does; it enters degraded mode when it no longer does. It
// returns why the daemon is degraded, nil when it is not.
func (m *Mode) Check(ctx context.Context) *registry.UnwritableError {
	m.check.Lock()
	defer m.check.Unlock()
	var why *registry.UnwritableError
	if errors.As(registry.Unwritable(m.home), &why) {
		m.degrade(why)
		return why
	}
	cur, _ := m.Degraded()
	if cur == nil {
		return nil
	}
	if err := m.reg.Reopen(ctx); err != nil {
		if errors.As(err, &why) {
			m.degrade(why)
			return why
		}
		m.log.Warn("degraded: the registry cannot be reopened for writing", "error", err)
		return cur
	}
	if err := m.finishStart(ctx); err != nil {
		if why = m.unwritableHome(err); why != nil {
			m.degrade(why)
			return why
		}
		m.log.Warn("degraded: finishing the start", "error", err)
		return cur
	}
	m.mu.Lock()
	since := m.since
	m.why = nil
	m.mu.Unlock()
	m.log.Info("the home takes data again; degraded mode is over", "home", m.home, "degraded_for", time.Since(since).Round(time.Second))
	return nil
}

// finishStart writes home.id if the start could not, then has the
// daemon finish the rest.
func (m *Mode) finishStart(ctx context.Context) error {
	m.mu.Lock()
	id := m.homeID
	m.mu.Unlock()
	if id != "" {
		if err := ports.WriteHomeID(m.home, id); err != nil {
			return err
		}
		m.mu.Lock()
		m.homeID = ""
		m.mu.Unlock()
	}
	return m.finish.FinishStart(ctx)
}

// Run checks, every Retry while the daemon is degraded, whether its home
// takes data again, until ctx ends.
func (m *Mode) Run(ctx context.Context) {
	t := time.NewTicker(Retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if why, _ := m.Degraded(); why != nil {
			m.Check(ctx)
		}
	}
}

// Refusal is the answer to a verb that writes: the degraded refusal
// (api.CodeConflict, Message) while the home, checked again, takes no new
// data; nil when it does.
func (m *Mode) Refusal(ctx context.Context) error {
	if why := m.Check(ctx); why != nil {
		return api.Errorf(api.CodeConflict, "%s", m.Message(why))
	}
	return nil
}

// Status is status's degraded field, checking the home again first when
// the daemon is degraded; nil when it is not.
func (m *Mode) Status(ctx context.Context) *api.Degraded {
	if why, _ := m.Degraded(); why == nil {
		return nil
	}
	if why := m.Check(ctx); why == nil {
		return nil
	}
	if why, since := m.Degraded(); why != nil {
		return &api.Degraded{Reason: m.Message(why), Since: since}
	}
	return nil
}
