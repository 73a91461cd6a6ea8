package world

import (
	"context"
	"time"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
)

// The engine's consumer interfaces: what it needs from the daemon that is
// not about worlds. Each is small and has a no-op implementation
// (NoEvents, NoRoutes, NoProgress) for an engine without a daemon around
// it. Admission is not an interface: the engine is handed admission's
// controller (StartAdmission) and lives it itself (admission.go); without
// one it admits every world at once.

// Events is where the engine records what happened (the daemon's event
// log).
type Events interface {
	Emit(events.Event)
}

// Routes is the proxy's table of world URLs.
type Routes interface {
	// Refresh rebuilds the table now; RefreshAsync asks for a rebuild
	// soon, without waiting.
	Refresh(ctx context.Context)
	RefreshAsync()
	// URLFor maps a hostname of cfg's project onto the URL that reaches
	// it. The hostnames are the engine's (names.Host), as is the table
	// (Engine.Routes).
	URLFor(cfg *config.Config) func(host string) string
	// Activity is how many proxied connections to the routes of a world
	// (one service's when service is not "") are open now, WebSockets
	// and event streams until they close, and when the last of them
	// closed (zero: none since the proxy started). The idle checks stop
	// nothing that has one open, and count its idle time from its close.
	Activity(project, worktree, service string) (open int, ended time.Time)
}

// Progress is what an operation tells its caller while it works, and how
// it learns the caller left. *Stream implements it.
type Progress interface {
	// Progress reports a step; Output a chunk of a command's output.
	Progress(step, service, msg string)
	Output(check int, stream, data string)
	// Gone is closed when the caller hangs up or stops reading; HungUp
	// only when it hung up.
	Gone() <-chan struct{}
	HungUp() <-chan struct{}
}

// NoEvents records nothing.
type NoEvents struct{}

func (NoEvents) Emit(events.Event) {}

// NoRoutes keeps no proxy table: URLs are plain http on the hostname.
type NoRoutes struct{}

func (NoRoutes) Refresh(context.Context) {}
func (NoRoutes) RefreshAsync()           {}
func (NoRoutes) URLFor(*config.Config) func(string) string {
	return func(host string) string { return "http://" + host }
}
func (NoRoutes) Activity(string, string, string) (int, time.Time) { return 0, time.Time{} }

// NoProgress tells nobody; its caller never leaves.
type NoProgress struct{}

func (NoProgress) Progress(string, string, string) {}
func (NoProgress) Output(int, string, string)      {}
func (NoProgress) Gone() <-chan struct{}           { return nil }
func (NoProgress) HungUp() <-chan struct{}         { return nil }

var (
	_ Events   = NoEvents{}
	_ Routes   = NoRoutes{}
	_ Progress = NoProgress{}
	_ Progress = (*Stream)(nil)
)
