package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
)

// Degraded mode: the daemon of a home that takes no new data (a full disk,
// a spent quota, a read-only file system). Services outlive the daemon,
// so a daemon that could not start would leave them unsupervised until
// space returned; instead it starts anyway, with its registry read-only
// (registry.Open), re-adopts and supervises its worlds, serves status and
// env, and refuses every verb that would write with degradedMessage. What
// it learns meanwhile (a restart, an exit) is not recorded; it is written
// once the home takes data again. Every degradedRetry, and before each
// verb that writes, it checks the home again, and it leaves degraded mode
// without a restart once there is room (finishing what its start skipped:
// home.id, events.log, the registry records).

// degradedRetry is how often a degraded daemon checks whether its home
// takes writes again.
const degradedRetry = 5 * time.Second

// degradedMode is the daemon's degraded state.
type degradedMode struct {
	check sync.Mutex // one check (and one way out) at a time

	mu    sync.Mutex
	why   *registry.UnwritableError // nil: not degraded
	since time.Time
	// homeID: home.id is still to be written.
	homeID bool
}

// degradedMessage is what status shows and every refused verb answers, in
// words that stay the same: scripts and agents may match them.
func degradedMessage(home string, why *registry.UnwritableError) string {
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	until := "until space is freed"
	if why.Kind == registry.ReadOnlyFS {
		until = "until its file system is writable again"
	}
	return fmt.Sprintf("binky's home %s is %s; the daemon supervises running worlds but refuses new work %s", home, why.Condition(), until)
}

// degraded returns why the daemon is degraded, and since when; nil when it
// is not.
func (d *Daemon) degraded() (*registry.UnwritableError, time.Time) {
	d.deg.mu.Lock()
	defer d.deg.mu.Unlock()
	return d.deg.why, d.deg.since
}

// degrade enters (or stays in) degraded mode for why.
func (d *Daemon) degrade(why *registry.UnwritableError) {
	d.deg.mu.Lock()
	was := d.deg.why
	d.deg.why = why
	if was == nil {
		d.deg.since = time.Now()
	}
	d.deg.mu.Unlock()
	if was == nil {
		d.log.Warn("degraded: " + degradedMessage(d.home, why))
	}
}

// unwritableHome reports why the home takes no new data, from err (the
// failure of a write the daemon made) and a probe of the home; nil when
// err has another cause.
func (d *Daemon) unwritableHome(err error) *registry.UnwritableError {
	var why *registry.UnwritableError
	if errors.As(err, &why) {
		return why
	}
	if errors.As(registry.Unwritable(d.home), &why) {
		return why
	}
	return nil
}

// startDegraded decides at start whether the daemon runs degraded: its
// registry opened read-only, or its home takes no new data.
func (d *Daemon) startDegraded() {
	var why *registry.UnwritableError
	if errors.As(d.reg.ReadOnly(), &why) || errors.As(registry.Unwritable(d.home), &why) {
		d.degrade(why)
	}
}

// tolerate is how the start treats a failed write: on an unwritable home
// it is logged, degraded mode entered, and true returned (carry on); any
// other failure is the caller's to return.
func (d *Daemon) tolerate(what string, err error) bool {
	why := d.unwritableHome(err)
	if why == nil {
		return false
	}
	d.degrade(why)
	d.log.Warn("skipped at start; done once the home takes data again", "step", what, "error", err)
	return true
}

// checkHome checks whether the home takes data again, and leaves degraded
// mode when it does; it enters degraded mode when it no longer does. It
// returns why the daemon is degraded, nil when it is not.
func (d *Daemon) checkHome(ctx context.Context) *registry.UnwritableError {
	d.deg.check.Lock()
	defer d.deg.check.Unlock()
	var why *registry.UnwritableError
	if errors.As(registry.Unwritable(d.home), &why) {
		d.degrade(why)
		return why
	}
	cur, _ := d.degraded()
	if cur == nil {
		return nil
	}
	if err := d.reg.Reopen(ctx); err != nil {
		if errors.As(err, &why) {
			d.degrade(why)
			return why
		}
		d.log.Warn("degraded: the registry cannot be reopened for writing", "error", err)
		return cur
	}
	if err := d.finishStart(ctx); err != nil {
		if why = d.unwritableHome(err); why != nil {
			d.degrade(why)
			return why
		}
		d.log.Warn("degraded: finishing the start", "error", err)
		return cur
	}
	d.deg.mu.Lock()
	since := d.deg.since
	d.deg.why = nil
	d.deg.mu.Unlock()
	d.log.Info("the home takes data again; degraded mode is over", "home", d.home, "degraded_for", time.Since(since).Round(time.Second))
	return nil
}

// finishStart does what a degraded start skipped, and records what the
// supervisor learned while nothing could be written.
func (d *Daemon) finishStart(ctx context.Context) error {
	d.deg.mu.Lock()
	homeID := d.deg.homeID
	d.deg.mu.Unlock()
	if homeID {
		if err := ports.WriteHomeID(d.home, d.homeID); err != nil {
			return err
		}
		d.deg.mu.Lock()
		d.deg.homeID = false
		d.deg.mu.Unlock()
	}
	if d.events.Load() == nil {
		l, err := events.Open(filepath.Join(d.home, "events.log"), d.redact)
		if err != nil {
			return err
		}
		d.events.Store(l)
	}
	if d.w != nil {
		d.w.RecordLive(ctx)
	}
	return nil
}

// degradedLoop checks, every degradedRetry while the daemon is degraded,
// whether its home takes data again.
func (d *Daemon) degradedLoop(ctx context.Context) {
	t := time.NewTicker(degradedRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if why, _ := d.degraded(); why != nil {
			d.checkHome(ctx)
		}
	}
}

// writing wraps the handler of a verb that writes: while the home takes
// no new data it answers the degraded refusal instead. writes, when not
// nil, says whether a call's arguments make it write (golden list and
// reserve without flags only read).
func (d *Daemon) writing(h handler, writes func(json.RawMessage) bool) handler {
	return func(ctx context.Context, args json.RawMessage, s *stream) (any, error) {
		if writes == nil || writes(args) {
			if why := d.checkHome(ctx); why != nil {
				return nil, api.Errorf(api.CodeConflict, "%s", degradedMessage(d.home, why))
			}
		}
		return h(ctx, args, s)
	}
}

// goldenWrites: drop and rebuild write; list does not.
func goldenWrites(raw json.RawMessage) bool {
	var a api.GoldenArgs
	if err := api.Decode(raw, &a); err != nil {
		return true // the handler refuses it
	}
	return a.Action != api.GoldenList && a.Action != ""
}

// reserveWrites: setting a bound writes; showing them does not.
func reserveWrites(raw json.RawMessage) bool {
	var a api.ReserveArgs
	if err := api.Decode(raw, &a); err != nil {
		return true
	}
	return a.RAM != nil || a.Disk != nil || a.MaxParallel != nil
}

// degradedStatus fills status's degraded field, checking the home again
// first when the daemon is degraded.
func (d *Daemon) degradedStatus(ctx context.Context, res *api.StatusResult) {
	if why, _ := d.degraded(); why == nil {
		return
	}
	if why := d.checkHome(ctx); why == nil {
		return
	}
	why, since := d.degraded()
	if why != nil {
		res.Degraded = &api.Degraded{Reason: degradedMessage(d.home, why), Since: since}
	}
}
