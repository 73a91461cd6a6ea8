package mysqladapter

import (
	"context"
	"strings"
	"time"
)

// A server at max_connections refuses a new connection with error 1040
// ("Too many connections"), a user at max_user_connections with 1203 or
// 1226. That passes as other sessions end, so a verb that meets it waits
// and runs again from the start rather than fail a binky up (or a test
// suite) beside others on a shared server. Every verb is idempotent, so
// running one again is safe.

// Server error numbers of a full server.
const (
	erTooManyUserConnections = 1203
	erUserLimitReached       = 1226
)

// fullWaitMax bounds the waiting for a full server; the call's deadline
// bounds it too.
const fullWaitMax = 30 * time.Second

// serverFull reports whether err is a full server's refusal.
func serverFull(err error) bool {
	switch errNumber(err) {
	case erTooManyConnections, erTooManyUserConnections:
		return true
	case erUserLimitReached:
		// Also the hourly query and update limits, which do not pass soon.
		return strings.Contains(err.Error(), "max_user_connections")
	}
	return false
}

// whileFull runs f until it does not fail because the server is full,
// waiting 100 ms, doubling to 2 s, between attempts, for fullWaitMax in
// all at most. The error is f's last. Before each wait it closes the idle
// connections of srv's pool: an adapter kept alive across a batch (the
// RPC tier) would otherwise hold slots of the full server while it waits
// for one, and two such adapters could wait on each other.
func (m *MySQL) whileFull(ctx context.Context, srv *server, f func() error) error {
	deadline := time.Now().Add(fullWaitMax)
	wait := 100 * time.Millisecond
	for {
		err := f()
		if !serverFull(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		srv.db.SetMaxIdleConns(0) // closes the idle ones
		srv.db.SetMaxIdleConns(maxIdleConns)
		if m.fullWait != nil {
			m.fullWait(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
