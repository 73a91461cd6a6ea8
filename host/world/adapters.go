package world

import (
	"context"
	"time"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/sdk"
)

// Adapters is what the engine asks of the adapter host: who answers to an
// adapter's name, and an open line to it. The daemon hands it its
// *adapter.Host (HostAdapters); the engine's tests hand it a fake that
// records every call.
type Adapters interface {
	// Find is the adapter that answers to name (its describe name or an
	// alias).
	Find(ctx context.Context, name string) (*adapter.Info, error)
	// Open connects to the adapter name; timeout (0: the host's default)
	// bounds each call on the line.
	Open(ctx context.Context, name string, timeout time.Duration) (AdapterConn, error)
}

// AdapterConn is one open line to an adapter (*adapter.Conn): the calls
// the engine makes on a slice. Close it when the batch is done.
type AdapterConn interface {
	Info() adapter.Info
	Provision(context.Context, *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error)
	Resolve(context.Context, *sdk.ResolveRequest) (*sdk.ResolveResponse, error)
	Clone(context.Context, *sdk.CloneRequest) (*sdk.CloneResponse, error)
	Destroy(context.Context, *sdk.DestroyRequest) (*sdk.DestroyResponse, error)
	Close() error
}

// HostAdapters is the engine's Adapters over an adapter host.
func HostAdapters(h *adapter.Host) Adapters { return hostAdapters{h} }

type hostAdapters struct{ h *adapter.Host }

func (a hostAdapters) Find(ctx context.Context, name string) (*adapter.Info, error) {
	return a.h.Find(ctx, name)
}

func (a hostAdapters) Open(ctx context.Context, name string, timeout time.Duration) (AdapterConn, error) {
	c, err := a.h.Open(ctx, name, adapter.WithTimeout(timeout))
	if err != nil {
		return nil, err // not a nil *adapter.Conn in a non-nil interface
	}
	return c, nil
}

var (
	_ Adapters    = hostAdapters{}
	_ AdapterConn = (*adapter.Conn)(nil)
)
