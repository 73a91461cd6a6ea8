package postgresadapter

import (
	"context"
	"time"
)

// A server at max_connections, or a role at its CONNECTION LIMIT, refuses
// a new connection with SQLSTATE 53300 ("sorry, too many clients
// already"). That passes as other sessions end, so a verb that meets it
// waits and runs again from the start rather than fail a binky up (or a
// test suite) beside others on a shared server. Every verb is idempotent,
// so running one again is safe.

// fullWaitMax bounds the waiting for a full server; the call's deadline
// bounds it too.
const fullWaitMax = 30 * time.Second

// whileFull runs f until it does not fail because the server is full,
// waiting 100 ms, doubling to 2 s, between attempts, for fullWaitMax in
// all at most. The error is f's last. Before each wait it closes the idle
// connections of srv's pool: an adapter kept alive across a batch (the
// RPC tier) would otherwise hold slots of the full server while it waits
// for one, and two such adapters could wait on each other.
func (p *Postgres) whileFull(ctx context.Context, srv *server, f func() error) error {
	deadline := time.Now().Add(fullWaitMax)
	wait := 100 * time.Millisecond
	for {
		err := f()
		if pgCode(err) != codeTooManyConns || time.Now().Add(wait).After(deadline) {
			return err
		}
		srv.pool.Reset()
		if p.fullWait != nil {
			p.fullWait(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
