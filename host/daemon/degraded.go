package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/events"
)

// Degraded mode, the daemon of a home that takes no new data, is
// host/degraded's; the daemon says which verbs write, and finishes its
// start on the way out.

// writing wraps the handler of a verb that writes: while the home takes
// no new data it answers the degraded refusal instead. writes, when not
// nil, says whether a call's arguments make it write (golden list and
// reserve without flags only read).
func (d *Daemon) writing(h handler, writes func(json.RawMessage) bool) handler {
	return func(ctx context.Context, args json.RawMessage, s *stream) (any, error) {
		if writes == nil || writes(args) {
			if err := d.deg.Refusal(ctx); err != nil {
				return nil, err
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

// startFinisher is the daemon's degraded.Finisher: once the home takes
// data again it opens the event log a degraded start could not, and
// records what the supervisor learned while nothing could be written.
type startFinisher Daemon

func (f *startFinisher) FinishStart(ctx context.Context) error {
	d := (*Daemon)(f)
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
