//go:build !windows

package world

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/binkyhq/binky/host/api"
)

// The engine operations the in-process tests run, one helper each: the
// only place a test calls an operation, so a change of the engine's
// methods is a change of this file alone. Each keeps what the operation
// wrote to its caller (progress, output) in f.said.

// up brings a world up.
func (f *fixture) up(ctx context.Context, a api.UpArgs) (*api.World, error) {
	return f.call(ctx, f.e.OpUp, a)
}

// down stops a world.
func (f *fixture) down(ctx context.Context, a api.DownArgs) (*api.World, error) {
	return f.call(ctx, f.e.OpDown, a)
}

// remove removes a world.
func (f *fixture) remove(ctx context.Context, a api.RemoveArgs) (*api.World, error) {
	return f.call(ctx, f.e.OpRemove, a)
}

// reset rebuilds a world's slices.
func (f *fixture) reset(ctx context.Context, a api.ResetArgs) (*api.World, error) {
	return f.call(ctx, f.e.OpReset, a)
}

// restart restarts a world's cmd services.
func (f *fixture) restart(ctx context.Context, a api.RestartArgs) (*api.World, error) {
	return f.call(ctx, f.e.OpRestart, a)
}

// call runs one wire handler of the engine with args encoded as a client
// sends them, its frames written to a buffer.
func (f *fixture) call(ctx context.Context, op func(context.Context, json.RawMessage, *Stream) (any, error), args any) (*api.World, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	res, err := op(ctx, raw, NewStream(&buf, nil))
	f.said = buf.String()
	if err != nil {
		return nil, err
	}
	w, ok := res.(*api.World)
	if !ok {
		return nil, fmt.Errorf("the operation answered a %T, not a world", res)
	}
	return w, nil
}
