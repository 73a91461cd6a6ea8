package health

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// ErrExited is wrapped by Wait's error when the watched process died before
// the probe passed.
var ErrExited = errors.New("process exited before it was healthy")

// Error is what Wait returns when a probe did not pass: the probe, how long
// it was tried, and the last failure (or the process's exit).
type Error struct {
	Probe string        // the probe as Probe.String shows it
	After time.Duration // how long Wait tried
	Last  error         // the last attempt's failure; nil if none ran
	Exit  error         // the process's exit, when it died first
}

func (e *Error) Error() string {
	if e.Exit != nil {
		if e.Last != nil {
			return fmt.Sprintf("%s: %v after %s (last probe failure: %v)", e.Probe, e.Exit, round(e.After), e.Last)
		}
		return fmt.Sprintf("%s: %v after %s", e.Probe, e.Exit, round(e.After))
	}
	if e.Last == nil {
		return fmt.Sprintf("%s: no attempt made in %s", e.Probe, round(e.After))
	}
	return fmt.Sprintf("%s: %v after %s", e.Probe, e.Last, round(e.After))
}

// Unwrap exposes both the exit (wrapped with ErrExited) and the last failure.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Exit != nil {
		errs = append(errs, ErrExited, e.Exit)
	}
	if e.Last != nil {
		errs = append(errs, e.Last)
	}
	return errs
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}

// Options are what Wait watches besides the probe itself.
type Options struct {
	// Alive is called before each attempt and returns nil while the
	// watched process runs, else its exit. nil: no process to watch.
	Alive func() error
	// Owner, when set, is asked after each http or tcp attempt that passed,
	// with the address the attempt connected to; an error fails that
	// attempt (and is what the final error names, if the wait ends on it),
	// so Wait keeps trying until the socket that answers is the right one.
	// The supervisor uses it to count only the service's own listener
	// (listeners.Check): a probe answered by another program on the same
	// port — another home's world, a stray server — is not health. Exec
	// probes do not call it; neither do attempts that did not connect.
	Owner func(addr netip.AddrPort) error
}

// Wait repeats the probe until it passes (nil), Timeout elapses, ctx ends,
// or alive reports that the process died. The first attempt runs at once;
// the pauses after it start at 1 ms and double, at most 2 ms apart while
// the service is under 0.5 s old, 10 ms while under 2 s, and then up to
// Interval, so a service is seen healthy within moments of answering. alive is called before each
// attempt and returns nil while the process runs, else its exit; a nil
// alive means there is no process to watch. The error is an *Error.
func Wait(ctx context.Context, p Probe, alive func() error) error {
	return WaitWith(ctx, p, Options{Alive: alive})
}

// WaitWith is Wait with Options: Alive is Wait's alive, and Owner vets
// every attempt that passed. Its attempts share one Prober without
// keep-alive: the wait leaves no connection behind.
func WaitWith(ctx context.Context, p Probe, opts Options) error {
	pr := newProber(p, false)
	defer pr.Close()
	return pr.Wait(ctx, opts)
}

// Wait is WaitWith on the Prober.
func (pr *Prober) Wait(ctx context.Context, opts Options) error {
	p := pr.p
	alive := opts.Alive
	if err := p.Validate(); err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(p.timeout())
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last error
	gap := firstGap
	for {
		select {
		case <-ctx.Done():
			if time.Now().Before(deadline) { // the caller gave up, not the timeout
				return &Error{Probe: p.String(), After: time.Since(start), Last: ctx.Err()}
			}
			return &Error{Probe: p.String(), After: p.timeout(), Last: lastOr(last, ctx.Err())}
		case <-timer.C:
		}
		if alive != nil {
			if exit := alive(); exit != nil {
				return &Error{Probe: p.String(), After: time.Since(start), Last: last, Exit: exit}
			}
		}
		attempt, stop := context.WithTimeout(ctx, max(p.interval(), maxAttempt))
		began := time.Now()
		peer, err := pr.attempt(attempt)
		if err == nil && opts.Owner != nil && peer.IsValid() {
			err = opts.Owner(peer)
		}
		cut := attempt.Err() != nil || !time.Now().Before(deadline)
		stop()
		if err == nil {
			return nil
		}
		ran := time.Since(began)
		switch {
		case !cut || last == nil:
			last = err
		case ran >= min(p.interval(), time.Second):
			// It hung: a server that accepts and never answers. That is
			// the news, not whatever the attempt before it saw.
			last = fmt.Errorf("no answer within %s (the server did not respond): %w", round(ran), err)
		}
		// An attempt cut short at once by the deadline says less than the
		// one before, which is kept.
		gap = nextGap(gap, time.Since(start), p.interval())
		timer.Reset(gap)
	}
}

// The pause between attempts starts at firstGap and doubles up to
// eagerGap while the service is very young (eagerFor), so a service that
// starts answering is seen healthy within a couple of milliseconds (a
// refused connect to a loopback port costs some tens of microseconds);
// then up to youngGap until it is youngFor old, and after that up to the
// probe's interval.
const (
	firstGap = time.Millisecond
	eagerGap = 2 * time.Millisecond
	eagerFor = 500 * time.Millisecond
	youngGap = 10 * time.Millisecond
	youngFor = 2 * time.Second
)

func nextGap(gap, since, interval time.Duration) time.Duration {
	limit := interval
	switch {
	case since < eagerFor:
		limit = min(eagerGap, interval)
	case since < youngFor:
		limit = min(youngGap, interval)
	}
	return min(max(gap*2, firstGap), limit)
}

func lastOr(last, alt error) error {
	if last != nil {
		return last
	}
	return alt
}
