//go:build !windows

package world

import (
	"bytes"
	"context"

	"github.com/binkyhq/binky/host/api"
)

// The engine operations the in-process tests run, one helper each: the
// only place a test calls an operation, so a change of the engine's
// methods is a change of this file alone. Each keeps what the operation
// wrote to its caller (progress, output) in f.said.

// up brings a world up.
func (f *fixture) up(ctx context.Context, a api.UpArgs) (*api.World, error) {
	return call(f, ctx, f.e.Up, a)
}

// down stops a world.
func (f *fixture) down(ctx context.Context, a api.DownArgs) (*api.World, error) {
	return call(f, ctx, f.e.Down, a)
}

// remove removes a world.
func (f *fixture) remove(ctx context.Context, a api.RemoveArgs) (*api.World, error) {
	return call(f, ctx, f.e.Remove, a)
}

// reset rebuilds a world's slices.
func (f *fixture) reset(ctx context.Context, a api.ResetArgs) (*api.World, error) {
	return call(f, ctx, f.e.Reset, a)
}

// restart restarts a world's cmd services.
func (f *fixture) restart(ctx context.Context, a api.RestartArgs) (*api.World, error) {
	return call(f, ctx, f.e.Restart, a)
}

// stopServices stops named services of a world and keeps them stopped.
func (f *fixture) stopServices(ctx context.Context, a api.ServicesArgs) (*api.World, error) {
	return call(f, ctx, f.e.StopServices, a)
}

// startServices starts services binky stop stopped.
func (f *fixture) startServices(ctx context.Context, a api.ServicesArgs) (*api.World, error) {
	return call(f, ctx, f.e.StartServices, a)
}

// call runs one operation of the engine with a stream written to a buffer,
// as the daemon hands it a caller's.
func call[A any](f *fixture, ctx context.Context, op func(context.Context, A, Progress) (*api.World, error), args A) (*api.World, error) {
	var buf bytes.Buffer
	w, err := op(ctx, args, NewStream(&buf, nil))
	f.said = buf.String()
	return w, err
}

// upAlongside brings a world up beside other operations running at once:
// what it wrote is returned, not kept in f.said.
func (f *fixture) upAlongside(ctx context.Context, a api.UpArgs) (*api.World, string, error) {
	var buf bytes.Buffer
	w, err := f.e.Up(ctx, a, NewStream(&buf, nil))
	return w, buf.String(), err
}

// run runs one command in a world (binky run), its caller s.
func (f *fixture) run(ctx context.Context, a api.RunArgs, s Progress) (*api.RunResult, error) {
	return f.e.Run(ctx, a, s)
}
