package supervisor

import (
	"fmt"
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

// monitorHealth repeats spec's probe against run r for as long as r is the
// unit's current run and the supervisor lives. After UnhealthyAfter
// failures in a row the service turns unhealthy, with a reason that says
// which probe failed, how, and for how long ("unhealthy: GET …: 503 for
// 40s", updated on every failure); the first probe that passes again turns
// it back to running. Both turns are events. sick says the service is
// unhealthy already (its start-up wait gave up).
func (s *Supervisor) monitorHealth(u *unit, spec Spec, r *run, sick bool) {
	if spec.Health == nil {
		return
	}
	probe := *spec.Health
	owner := listenerCheck(spec, r)
	go func() {
		tick := time.NewTicker(s.healthEvery)
		defer tick.Stop()
		failures := 0
		var since time.Time
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-r.exited:
				return
			case <-tick.C:
			}
			err := health.CheckWith(s.ctx, probe, health.Options{Owner: owner})
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
