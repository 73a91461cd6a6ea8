package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-redis.
const Name = "redis"

// KeyACL is the one config key (bool): true makes provision create an ACL
// user per slice and fail where the server cannot; false never does, and
// resolve answers the admin address. Absent: ACL users where the server
// has ACLs.
const KeyACL = "acl"

// Redis is the adapter. It is long-lived in the RPC tier: it keeps one
// client (a small pool) per admin URL across calls.
type Redis struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Redis { return &Redis{servers: map[string]*server{}} }

// Describe says who the adapter is: redis (alias valkey), unable to clone,
// recording each slice's owner (see claim.go).
func (*Redis) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"valkey"}, Clone: false, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	srv    *server
	acl    *bool  // config acl; nil: probe the server
	prefix string // "<slice>:"
	user   string // the ACL user: the slice name
}

func (r *Redis) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	var acl *bool
	var unknown []string
	for k, v := range t.Config {
		if k != KeyACL {
			unknown = append(unknown, k)
			continue
		}
		b, ok := v.(bool)
		if !ok {
			return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %v (%T)", KeyACL, v, v)
		}
		acl = &b
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the redis adapter (known: %s)", strings.Join(unknown, `", "`), KeyACL)
	}
	srv, err := r.server(t.AdminURL)
	if err != nil {
		return nil, err
	}
	prefix := names.RedisPrefix(t.Slice)
	return &slice{srv: srv, acl: acl, prefix: prefix, user: strings.TrimSuffix(prefix, ":")}, nil
}

// checkSlice refuses a name that is not a slice name (names.IsSlice)
// rather than trusting it: binky only ever sends those.
func checkSlice(what, s string) error {
	if !names.IsSlice(s) {
		return sdk.Errorf(sdk.CodeInvalid, "%s %q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", what, s)
	}
	return nil
}

// Provision records the slice's owner claim (refusing a slice another binky
// home claimed, adopting one nobody claimed), then makes the slice's ACL
// user, where ACLs are in use. Keys need no provisioning.
func (r *Redis) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision redis slice %q", req.Slice)
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := claimSlice(ctx, s, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	useACL, err := r.useACL(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if !useACL {
		if err := s.srv.client.Ping(ctx).Err(); err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		return &sdk.ProvisionResponse{}, nil
	}
	if _, err := setUser(ctx, s); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.ProvisionResponse{}, nil
}

// Resolve answers redis://<slice>:<password>@host:port/<db> where ACLs are
// in use (re-setting the user on the way, so a server that lost its ACLs
// heals), else the admin address; values "prefix" always, "user" with ACLs.
// A slice another binky home claimed is refused.
func (r *Redis) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve redis slice %q", req.Slice)
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := checkClaim(ctx, s, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	values := map[string]string{"prefix": s.prefix}
	useACL, err := r.useACL(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if !useACL {
		return &sdk.ResolveResponse{Address: s.srv.url.String(), Values: values}, nil
	}
	pw, err := setUser(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	values["user"] = s.user
	return &sdk.ResolveResponse{Address: slicedURL(s.srv.url, url.UserPassword(s.user, pw)), Values: values}, nil
}

// Clone is not offered: a Redis slice is built by provision, migrate and
// seed.
func (*Redis) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone redis slice %q from %q: the redis adapter does not clone; build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy deletes the slice's keys in every logical database, then its ACL
// user, then its owner claim. A slice another binky home claimed is
// refused before anything is deleted; a slice already gone is fine.
func (r *Redis) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy redis slice %q", req.Slice)
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := checkClaim(ctx, s, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if _, err := deleteKeys(ctx, s.srv, s.prefix); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	useACL, err := r.useACL(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if useACL {
		if err := s.srv.client.ACLDelUser(ctx, s.user).Err(); err != nil {
			return nil, fail(op, req.AdminURL, fmt.Errorf("delete ACL user %q: %w", s.user, err))
		}
	}
	// The claim goes last, so a destroy that fails half-way leaves what is
	// left of the slice still claimed.
	if err := dropClaim(ctx, s); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.DestroyResponse{}, nil
}

// Close closes every client the adapter opened. sdk.Run does not call it
// today; the process exiting closes the connections as well.
func (r *Redis) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for k, s := range r.servers {
		errs = append(errs, s.client.Close())
		if s.claims != s.client {
			errs = append(errs, s.claims.Close())
		}
		delete(r.servers, k)
	}
	return errors.Join(errs...)
}

var _ sdk.Adapter = (*Redis)(nil)
