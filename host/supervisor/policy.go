package supervisor

import (
	"time"

	"github.com/binkyhq/binky/host/state"
)

// Policy is the restart schedule. Zero fields take the defaults of
// DefaultPolicy, so tests can shrink only what they need.
type Policy struct {
	Base        time.Duration // first backoff (1s)
	Cap         time.Duration // longest backoff (30s)
	Stable      time.Duration // a run this long resets the count (10s)
	GiveUpAfter int           // consecutive failed starts before giving up (5)
}

// DefaultPolicy is the schedule services run with.
func DefaultPolicy() Policy {
	return Policy{Base: time.Second, Cap: 30 * time.Second, Stable: 10 * time.Second, GiveUpAfter: 5}
}

func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.Base <= 0 {
		p.Base = d.Base
	}
	if p.Cap <= 0 {
		p.Cap = d.Cap
	}
	if p.Cap < p.Base {
		p.Cap = p.Base
	}
	if p.Stable <= 0 {
		p.Stable = d.Stable
	}
	if p.GiveUpAfter <= 0 {
		p.GiveUpAfter = d.GiveUpAfter
	}
	return p
}

// Backoff is the pause before the attempt-th consecutive restart (1-based):
// Base doubled attempt-1 times, never past Cap, then shortened by up to 20%
// by jitter (in [0,1)), so services that crashed together do not restart in
// lockstep. It never sleeps.
func (p Policy) Backoff(attempt int, jitter float64) time.Duration {
	p = p.withDefaults()
	d := p.Base
	for i := 1; i < attempt && d < p.Cap; i++ {
		d *= 2
	}
	d = min(d, p.Cap)
	jitter = min(max(jitter, 0), 1)
	return d - time.Duration(float64(d)*0.2*jitter)
}

// Decision is what to do after a process ended.
type Decision struct {
	Restart bool          // spawn again after Delay
	GiveUp  bool          // the policy wanted a restart, but too many starts failed
	Delay   time.Duration // backoff before the restart
	Attempt int           // consecutive failed starts so far, this one included
}

// Decide applies policy p to one exit. failures is the count of consecutive
// failed starts before this exit (a run shorter than Stable is a failed
// start); the returned count replaces it. A run that lasted Stable resets the
// count first. It never sleeps.
func (p Policy) Decide(failures int, mode Restart, exit Exit, jitter float64) (Decision, int) {
	p = p.withDefaults()
	if exit.RanFor >= p.Stable {
		failures = 0
	}
	wants := mode == RestartAlways || (mode == RestartOnFailure && !exit.clean())
	if !wants {
		return Decision{}, failures
	}
	failures++
	if failures >= p.GiveUpAfter {
		return Decision{GiveUp: true, Attempt: failures}, failures
	}
	return Decision{Restart: true, Delay: p.Backoff(failures, jitter), Attempt: failures}, failures
}

// stateAfter is the state a service lands in for a decision.
func stateAfter(d Decision, exit Exit) state.Service {
	switch {
	case d.Restart:
		return state.ServiceBackoff
	case d.GiveUp || !exit.clean():
		return state.ServiceFailed
	}
	return state.ServiceExited
}
