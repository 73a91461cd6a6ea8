package daemon

import (
	"context"
	"time"
)

// Bounds of the background sync of the port leases.
const (
	leaseSyncWait  = 15 * time.Second // one try, lock wait included
	leaseSyncRetry = 30 * time.Second // between failed tries
)

// syncLeases brings the machine-wide port leases in line with the
// registry (ports.SyncLeases) without holding up the daemon's start: each
// try is bounded, a failure — the lease directory refused, this user's
// lease lock held by a stuck process — is logged and tried again until one
// gets through or a reservation has run it (ports.Allocator.LeasesSynced).
func (d *Daemon) syncLeases(ctx context.Context) {
	for !d.ports.LeasesSynced() {
		sctx, cancel := context.WithTimeout(ctx, leaseSyncWait)
		res, err := d.ports.SyncLeases(sctx)
		cancel()
		if err == nil {
			if len(res.Contested) > 0 {
				d.log.Warn("port blocks another home leased meanwhile; those worlds move at their next up", "blocks", len(res.Contested))
			}
			for i, ig := range res.Ignored {
				if i == 10 {
					d.log.Warn("more port lease files ignored; binky doctor lists them", "count", res.IgnoredTotal-10)
					break
				}
				d.log.Warn(ig.String())
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("sync port leases; worlds keep running, new port blocks wait for it, and it is tried again", "error", err, "retry_in", leaseSyncRetry)
		t := time.NewTimer(leaseSyncRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
