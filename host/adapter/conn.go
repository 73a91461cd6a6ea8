package adapter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// OpenOption adjusts one Conn.
type OpenOption func(*Conn)

// WithTimeout sets the deadline of each call on the Conn (a service's
// timeout); zero keeps the host's default.
func WithTimeout(d time.Duration) OpenOption {
	return func(c *Conn) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Conn is an open line to one adapter: over RPC when the adapter offers it
// (one process for the whole batch), one process per call otherwise. Close
// it when the batch is done. It is safe for concurrent use.
type Conn struct {
	h       *Host
	name    string // the name asked for; it travels as Header.Adapter
	info    Info
	timeout time.Duration
	bin     *client.Binary
	sess    *client.Session // nil in the one-shot tier

	mu      sync.Mutex
	curCall string // the latest call on the session, to attribute its stderr
}

// Open finds name and connects to it in the tier the host's policy picks.
// ctx bounds the start of an RPC adapter.
func (h *Host) Open(ctx context.Context, name string, opts ...OpenOption) (*Conn, error) {
	info, err := h.Find(ctx, name)
	if err != nil {
		return nil, err
	}
	c := &Conn{h: h, name: name, info: *info, timeout: h.timeout}
	for _, o := range opts {
		o(c)
	}
	c.bin = h.binary(ctx, info.Path, info.Name, c.call)
	if info.RPC && !h.oneShot {
		c.setCall("start")
		sctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		sess, err := c.bin.StartRPC(sctx)
		if err != nil {
			return nil, fmt.Errorf("open adapter %q: %w (set %s=1 to use the one-shot tier)", name, err, OneShotEnv)
		}
		c.sess = sess
	}
	return c, nil
}

// Batch opens name, runs fn with the Conn and closes it, so an RPC adapter
// serves every call of fn from one process.
func (h *Host) Batch(ctx context.Context, name string, fn func(*Conn) error, opts ...OpenOption) error {
	c, err := h.Open(ctx, name, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// Info is what discovery knows of the adapter.
func (c *Conn) Info() Info { return c.info }

// Tier is TierRPC or TierOneShot: how calls travel on this Conn.
func (c *Conn) Tier() string {
	if c.sess != nil {
		return TierRPC
	}
	return TierOneShot
}

// Close ends the RPC session, if any. It is idempotent.
func (c *Conn) Close() error {
	if c.sess == nil {
		return nil
	}
	c.setCall("close")
	return c.sess.Close()
}

func (c *Conn) setCall(call string) {
	c.mu.Lock()
	c.curCall = call
	c.mu.Unlock()
}

func (c *Conn) call() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.curCall
}

// caller returns the tier's client.Caller for one call, with its deadline.
func (c *Conn) caller(ctx context.Context, call string) (context.Context, context.CancelFunc, client.Caller) {
	c.setCall(call)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	if c.sess != nil {
		return ctx, cancel, c.sess
	}
	// One process per call: its stderr belongs to this call alone.
	b := *c.bin
	b.Stderr = func(text []byte) { c.h.stderr(c.info.Name, call, text) }
	return ctx, cancel, &b
}

// header fills what the host always sends.
func (c *Conn) header(h *sdk.Header) {
	if h.Protocol == 0 {
		h.Protocol = sdk.Protocol
	}
	if h.Adapter == "" {
		h.Adapter = c.name
	}
}

// target fills the host-owned data directory ($BINKY_HOME/data/<adapter>).
func (c *Conn) target(t *sdk.Target) error {
	if t.DataDir != "" || c.h.home == "" {
		return nil
	}
	t.DataDir = filepath.Join(c.h.home, "data", c.info.Name)
	if err := os.MkdirAll(t.DataDir, 0o700); err != nil {
		return fmt.Errorf("create the %s adapter's data directory: %w", c.info.Name, err)
	}
	return nil
}

// Describe asks the adapter who it is (discovery has already done so once).
func (c *Conn) Describe(ctx context.Context) (*sdk.DescribeResponse, error) {
	ctx, cancel, cl := c.caller(ctx, sdk.CallDescribe)
	defer cancel()
	req := &sdk.DescribeRequest{}
	c.header(&req.Header)
	return client.Describe(ctx, cl, req)
}

// Provision asks for req.Slice to exist.
func (c *Conn) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	if err := c.target(&req.Target); err != nil {
		return nil, err
	}
	c.header(&req.Header)
	ctx, cancel, cl := c.caller(ctx, sdk.CallProvision)
	defer cancel()
	return client.Provision(ctx, cl, req)
}

// Resolve asks where req.Slice lives.
func (c *Conn) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	if err := c.target(&req.Target); err != nil {
		return nil, err
	}
	c.header(&req.Header)
	ctx, cancel, cl := c.caller(ctx, sdk.CallResolve)
	defer cancel()
	return client.Resolve(ctx, cl, req)
}

// Clone asks for req.Slice to become a copy of req.Source. An adapter that
// cannot clone answers with code unsupported (sdk.CodeOf).
func (c *Conn) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	if err := c.target(&req.Target); err != nil {
		return nil, err
	}
	c.header(&req.Header)
	ctx, cancel, cl := c.caller(ctx, sdk.CallClone)
	defer cancel()
	return client.Clone(ctx, cl, req)
}

// Size asks how much req.Slice takes (the optional size call). An adapter
// without it answers with code unsupported, or invalid when it predates
// the call.
func (c *Conn) Size(ctx context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	if err := c.target(&req.Target); err != nil {
		return nil, err
	}
	c.header(&req.Header)
	ctx, cancel, cl := c.caller(ctx, sdk.CallSize)
	defer cancel()
	return client.Size(ctx, cl, req)
}

// Destroy asks for req.Slice to be gone.
func (c *Conn) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	if err := c.target(&req.Target); err != nil {
		return nil, err
	}
	c.header(&req.Header)
	ctx, cancel, cl := c.caller(ctx, sdk.CallDestroy)
	defer cancel()
	return client.Destroy(ctx, cl, req)
}
