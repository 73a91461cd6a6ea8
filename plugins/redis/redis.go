package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-redis.
const Name = "redis"

// Redis is the adapter. It is long-lived in the RPC tier: it keeps one
// client (a small pool) per admin URL across calls.
type Redis struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Redis { return &Redis{servers: map[string]*server{}} }

// Describe says who the adapter is: redis (alias valkey), cloning with
// COPY (a server before 6.2 answers unsupported), recording each slice's
// owner (see claim.go).
func (*Redis) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"valkey"}, Clone: true, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	srv    *server
	cfg    config
	acl    *bool  // config acl; nil: probe the server
	prefix string // "<slice>:"
	user   string // the ACL user: the slice name
}

func (r *Redis) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	srv, err := r.server(t.AdminURL)
	if err != nil {
		return nil, err
	}
	prefix := names.RedisPrefix(t.Slice)
	return &slice{srv: srv, cfg: cfg, acl: cfg.acl, prefix: prefix, user: strings.TrimSuffix(prefix, ":")}, nil
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
	if s.cfg.mode == modeDB {
		_, existed, err := assignDB(ctx, s)
		if err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		return sdk.Provisioned(existed), nil
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
// heals), else the admin address; in db mode the admin address naming the
// slice's database. Values: see resolved. A slice another binky home
// claimed is refused.
func (r *Redis) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve redis slice %q", req.Slice)
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := checkClaim(ctx, s, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if s.cfg.mode == modeDB {
		idx, ok, err := assignedDB(ctx, s)
		if err == nil && !ok {
			err = sdk.Errorf(sdk.CodeConflict, "%s has no logical database assigned; provision it first", s.what())
		}
		if err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		return resolved(dbURL(s.srv.url, idx), idx, ""), nil
	}
	useACL, err := r.useACL(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if !useACL {
		return resolved(s.srv.url.String(), s.srv.db, s.prefix), nil
	}
	pw, err := setUser(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return resolved(slicedURL(s.srv.url, url.UserPassword(s.user, pw)), s.srv.db, s.prefix), nil
}

// Clone makes the slice a copy of the source with COPY (Redis 6.2+; an
// older server answers unsupported, and binky builds the slice with
// provision, migrate and seed): in prefix mode every key under the
// source's prefix, in the admin URL's database, renamed under the slice's
// prefix; in db mode the source's whole database into the slice's
// (assigned on the way). What the slice had before is deleted first.
func (r *Redis) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	op := fmt.Sprintf("clone redis slice %q from %q", req.Slice, req.Source)
	if err := checkSlice("source", req.Source); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	srcTarget := req.Target
	srcTarget.Slice = req.Source
	src, err := r.target(&srcTarget)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := checkClaim(ctx, src, &srcTarget); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if s.cfg.mode != modeDB {
		if err := claimSlice(ctx, s, &req.Target); err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		useACL, err := r.useACL(ctx, s)
		if err == nil && useACL {
			_, err = setUser(ctx, s)
		}
		if err == nil {
			err = copyPrefix(ctx, s.srv, src.prefix, s.prefix)
		}
		if err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		return &sdk.CloneResponse{Method: "copy"}, nil
	}
	from, ok, err := assignedDB(ctx, src)
	if err == nil && !ok {
		err = sdk.Errorf(sdk.CodeConflict, "the source %s has no logical database assigned", src.what())
	}
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := claimSlice(ctx, s, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	to, _, err := assignDB(ctx, s)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := copyDB(ctx, s.srv, from, to); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.CloneResponse{Method: "copy"}, nil
}

// Destroy flushes and releases the slice's database (db mode), or deletes
// its keys in every logical database, then its ACL user (prefix mode);
// then its owner claim. A slice another binky home claimed is
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
	// A database assigned in db mode is flushed and released whatever the
	// mode now, so a service switched between modes leaks nothing.
	if err := releaseDB(ctx, s); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if s.cfg.mode == modeDB {
		if err := dropClaim(ctx, s); err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		return &sdk.DestroyResponse{}, nil
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
