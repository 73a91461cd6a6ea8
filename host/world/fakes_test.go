package world

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/sdk"
)

// adapterCall is one call the engine made on the fake adapter host.
type adapterCall struct {
	Verb   string // provision, resolve, clone, destroy
	Slice  string
	Config map[string]any
}

func (c adapterCall) String() string { return c.Verb + " " + c.Slice }

// fakeAdapters is an adapter host whose every adapter keeps its slices in
// memory. It records every call and fails a verb on demand.
type fakeAdapters struct {
	mu     sync.Mutex
	slices map[string]map[string]any // slice → the config it was provisioned with
	calls  []adapterCall
	fail   map[string]fakeFailure // verb → how it fails
}

type fakeFailure struct {
	err   error
	times int // how many calls still fail; <0: every call
}

func newFakeAdapters() *fakeAdapters {
	return &fakeAdapters{slices: map[string]map[string]any{}, fail: map[string]fakeFailure{}}
}

// failNext makes the next times calls of verb fail with err (times < 0:
// every call from now on).
func (f *fakeAdapters) failNext(verb string, times int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[verb] = fakeFailure{err: err, times: times}
}

// takeCalls returns the calls made since the last takeCalls.
func (f *fakeAdapters) takeCalls() []adapterCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// sliceNames is the slices that exist, sorted.
func (f *fakeAdapters) sliceNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.slices))
}

// sliceConfig is the config slice name was provisioned with (nil: no
// such slice).
func (f *fakeAdapters) sliceConfig(name string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.slices[name])
}

// call records one call and says whether it fails.
func (f *fakeAdapters) call(verb string, t sdk.Target) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, adapterCall{Verb: verb, Slice: t.Slice, Config: maps.Clone(t.Config)})
	ff, ok := f.fail[verb]
	if !ok || ff.times == 0 {
		return nil
	}
	if ff.times > 0 {
		ff.times--
		f.fail[verb] = ff
	}
	return ff.err
}

func (f *fakeAdapters) Find(_ context.Context, name string) (*adapter.Info, error) {
	return &adapter.Info{Name: name, Implementation: name, Protocol: sdk.Protocol, Clone: true}, nil
}

func (f *fakeAdapters) Open(_ context.Context, name string, _ time.Duration) (AdapterConn, error) {
	return &fakeConn{f: f, name: name}, nil
}

type fakeConn struct {
	f    *fakeAdapters
	name string
}

func (c *fakeConn) Info() adapter.Info {
	return adapter.Info{Name: c.name, Implementation: c.name, Protocol: sdk.Protocol, Clone: true}
}

func (c *fakeConn) Provision(_ context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	if err := c.f.call("provision", req.Target); err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	// Provision is idempotent and applies the config it is given, to a
	// slice that exists too (as the real adapters do).
	_, existed := c.f.slices[req.Slice]
	c.f.slices[req.Slice] = maps.Clone(req.Config)
	return &sdk.ProvisionResponse{Existed: &existed}, nil
}

func (c *fakeConn) Resolve(_ context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	if err := c.f.call("resolve", req.Target); err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	cfg, ok := c.f.slices[req.Slice]
	if !ok {
		return nil, sdk.Errorf(sdk.CodeConflict, "slice %q does not exist", req.Slice)
	}
	user := ""
	if cfg["owner_role"] == true {
		user = req.Slice + "_owner@" // a role of its own: other credentials
	}
	return &sdk.ResolveResponse{Address: c.name + "://" + user + req.Slice, Values: map[string]string{"path": "/fake/" + req.Slice}}, nil
}

func (c *fakeConn) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	if err := c.f.call("clone", req.Target); err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	src, ok := c.f.slices[req.Source]
	if !ok {
		return nil, sdk.Errorf(sdk.CodeConflict, "template %q does not exist", req.Source)
	}
	c.f.slices[req.Slice] = maps.Clone(src)
	return &sdk.CloneResponse{Method: "copy"}, nil
}

func (c *fakeConn) Destroy(_ context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	if err := c.f.call("destroy", req.Target); err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	delete(c.f.slices, req.Slice)
	return &sdk.DestroyResponse{}, nil
}

// Size is the optional size call: the slice's config "bytes", or 0. It
// is not recorded among the calls (a status measures slices in the
// background, at times a test does not choose).
func (c *fakeConn) Size(_ context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	n, _ := c.f.slices[req.Slice]["bytes"].(int64)
	return &sdk.SizeResponse{Bytes: n, Shared: n / 4, Note: "fake"}, nil
}

func (c *fakeConn) Close() error { return nil }

// fakeDaemon is the daemon's side of the engine (world.Options' Events
// and Routes) as a test has it: events recorded in a slice, route
// refreshes counted.
type fakeDaemon struct {
	mu     sync.Mutex
	events []events.Event
	routes int // route refreshes asked
	// What Activity says, by project/worktree/service.
	open  map[string]int
	ended map[string]time.Time
}

// eventNames is the names of the events emitted so far, in order.
func (d *fakeDaemon) eventNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, e := range d.events {
		out = append(out, string(e.Event))
	}
	return out
}

// options fills o's daemon side with d.
func (d *fakeDaemon) options(o *Options) {
	o.Events, o.Routes = d, d
}

func (d *fakeDaemon) Emit(e events.Event) {
	d.mu.Lock()
	d.events = append(d.events, e)
	d.mu.Unlock()
}

func (d *fakeDaemon) Refresh(context.Context) { d.mu.Lock(); d.routes++; d.mu.Unlock() }
func (d *fakeDaemon) RefreshAsync()           { d.mu.Lock(); d.routes++; d.mu.Unlock() }

// Activity is what the test set in d.open and d.ended for a service
// (key project/worktree/service), summed over a world's for service "".
func (d *fakeDaemon) Activity(project, worktree, service string) (open int, ended time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, n := range d.open {
		if k == wokenKey(project, worktree, service) || (service == "" && strings.HasPrefix(k, project+"/"+worktree+"/")) {
			open += n
		}
	}
	for k, t := range d.ended {
		if (k == wokenKey(project, worktree, service) || (service == "" && strings.HasPrefix(k, project+"/"+worktree+"/"))) && t.After(ended) {
			ended = t
		}
	}
	return open, ended
}

// setActivity sets what Activity says of one service.
func (d *fakeDaemon) setActivity(project, worktree, service string, open int, ended time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open == nil {
		d.open, d.ended = map[string]int{}, map[string]time.Time{}
	}
	k := wokenKey(project, worktree, service)
	d.open[k], d.ended[k] = open, ended
}

func (d *fakeDaemon) URLFor(cfg *config.Config) func(string) string {
	if cfg.Project.HTTPS {
		return func(host string) string { return "https://" + host }
	}
	return func(host string) string { return "http://" + host }
}

var (
	_ Adapters    = (*fakeAdapters)(nil)
	_ AdapterConn = (*fakeConn)(nil)
	_ Events      = (*fakeDaemon)(nil)
	_ Routes      = (*fakeDaemon)(nil)
)
