package supervisor

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/binkyhq/binky/host/health"
	"github.com/binkyhq/binky/host/state"
)

// Defaults of the health monitor that runs once a service is up.
const (
	// DefaultHealthEvery is how often a running service's probe is
	// repeated.
	DefaultHealthEvery = 5 * time.Second
	// DefaultUnhealthyAfter is how many probes in a row must fail before a
	// running service is marked unhealthy, so a single slow answer under
	// load does not flap the state.
	DefaultUnhealthyAfter = 3
)

// monitorHealth repeats spec's probe against run r, at every round of the
// supervisor's beat, for as long as r is the unit's current run and the
// supervisor lives. After UnhealthyAfter
// failures in a row the service turns unhealthy, with a reason that says
// which probe failed, how, and for how long ("unhealthy: GET …: 503 for
// 40s", updated on every failure); the first probe that passes again turns
// it back to running. Both turns are events. sick says the service is
// unhealthy already (its start-up wait gave up).
// pr is the run's Prober and owner its listener check (listenerCheck),
// both from its start-up wait; pr is closed when the monitor ends.
func (s *Supervisor) monitorHealth(u *unit, spec Spec, r *run, pr *health.Prober, owner func(netip.AddrPort) error, sick bool) {
	probe := *spec.Health
	go func() {
		defer pr.Close()
		failures := 0
		var since time.Time
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-r.exited:
				return
			case <-s.nextBeat():
			}
			err := pr.Check(s.ctx, health.Options{Owner: owner})
			if s.ctx.Err() != nil || r.hasExited() {
				return
			}
			if err == nil {
				failures = 0
				if !sick {
					continue
				}
				sick = false
				if !s.setHealth(u, r, state.ServiceRunning, "") {
					return
				}
				u.log.Info("health probe passes again")
				s.emit(Event{Name: EventHealthy, Key: spec.Key, Pid: r.pid})
				continue
			}
			if failures == 0 {
				since = time.Now()
			}
			failures++
			if failures < s.unhealthyAfter {
				continue
			}
			reason := fmt.Sprintf("unhealthy: %s: %v for %s", probe.String(), err, roundFor(time.Since(since)))
			if !s.setHealth(u, r, state.ServiceUnhealthy, reason) {
				return
			}
			if !sick {
				sick = true
				tail, _ := ReadLogs(spec.LogPath, 20)
				u.log.Warn("health probe fails", "error", err, "failures", failures)
				s.emit(Event{Name: EventUnhealthy, Key: spec.Key, Pid: r.pid, Error: reason, LogTail: tail})
			}
		}
	}()
}

// beat closes the round's channel every healthEvery, which wakes every
// monitor at once: one timer for all the services' periodic probes, so an
// idle daemon wakes once a round (then probes them side by side) instead
// of once a service, each wake-up costing the runtime and the kernel more
// than a probe of a loopback port does. A service's first periodic probe
// comes at the first round after its start-up wait, within healthEvery.
func (s *Supervisor) beat() {
	t := time.NewTicker(s.healthEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.beatMu.Lock()
		close(s.beatCh)
		s.beatCh = make(chan struct{})
		s.beatMu.Unlock()
	}
}

// nextBeat is closed at the next round of periodic probes.
func (s *Supervisor) nextBeat() <-chan struct{} {
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	return s.beatCh
}

// setHealth moves u to state to with reason while r is still its running run;
// false when it is not (the service restarted, stopped or exited), which
// ends the monitor of r.
func (s *Supervisor) setHealth(u *unit, r *run, to state.Service, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.run != r || r.hasExited() {
		return false
	}
	switch u.state {
	case state.ServiceRunning, state.ServiceUnhealthy:
	default:
		return false // stopping, backoff: not the monitor's to change
	}
	u.state = to
	u.reason = reason
	return true
}

// roundFor renders a failing time as whole seconds ("40s"), or
// milliseconds under a second.
func roundFor(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
