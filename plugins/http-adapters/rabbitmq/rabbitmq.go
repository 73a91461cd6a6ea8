package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-rabbitmq.
const Name = "rabbitmq"

// example is a placeholder, never a real credential: a hint quoting a
// password that is also a secret of the user would be redacted to ***.
const example = "http://USER:PASSWORD@127.0.0.1:15672"

var hints = httpx.Hints{
	sdk.CodeUnreachable: "is RabbitMQ running with the management plugin (rabbitmq-plugins enable rabbitmq_management), and is admin_url the management API's host and port, like " + example + "?",
	sdk.CodeAuth:        "check admin_url's user and password; the user needs the administrator tag to create vhosts and users",
}

// RabbitMQ is the adapter. It holds one HTTP client for every call.
type RabbitMQ struct {
	http *httpx.Client
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *RabbitMQ { return &RabbitMQ{http: httpx.New()} }

// Describe says who the adapter is: rabbitmq, unable to clone, claiming
// its slices.
func (*RabbitMQ) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Clone: false, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	ep    *httpx.Endpoint
	cfg   *config
	vhost string
}

func target(t *sdk.Target) (*slice, error) {
	if !names.IsSlice(t.Slice) {
		return nil, sdk.Errorf(sdk.CodeInvalid, "%q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", t.Slice)
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	ep, err := httpx.ParseAdminURL(t.AdminURL, example)
	if err != nil {
		return nil, err
	}
	if cfg.user == "" && ep.User == "" {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url has no user: write it as %s, or set config %s", example, KeyUser)
	}
	return &slice{ep: ep, cfg: cfg, vhost: names.Vhost(t.Slice)}, nil
}

// user is the user the slice's permissions go to.
func (s *slice) user() string {
	switch s.cfg.user {
	case "":
		return s.ep.User
	case PerSlice:
		return s.vhost
	}
	return s.cfg.user
}

// Provision creates the vhost, with the caller's owner claim as its
// description, and grants the slice's user full permissions on it
// (creating that user first with user = "per-slice"). A vhost another
// owner claimed is refused with code conflict before anything is touched;
// one claimed by nobody is adopted: its description becomes the claim. It
// reports whether the vhost existed.
func (r *RabbitMQ) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision rabbitmq slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	v, err := r.lookup(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	existed := v != nil
	if existed {
		if err := req.CheckClaim(s.what(), v.Description); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
	}
	if s.cfg.user != "" && s.cfg.user != PerSlice {
		if err := r.checkNamedUser(ctx, s); err != nil { // before anything is made
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
	}
	// A new vhost is made with the claim; an existing one the checks above
	// let through is adopted (no claim yet) or carries this owner's claim,
	// rewritten when its label changed.
	if !existed || req.Owner != "" && v.Description != req.Claim() {
		if err := r.putVhost(ctx, s, &req.Target, v); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
	}
	pw, err := r.grant(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints, pw)
	}
	return sdk.Provisioned(existed), nil
}

// Resolve answers the vhost's amqp:// address for the slice's user,
// re-granting on the way so a server that lost the user heals. It fails
// with code conflict when the vhost is gone or another owner claimed it.
func (r *RabbitMQ) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve rabbitmq slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	v, err := r.lookup(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if v == nil {
		return nil, httpx.Fail(op, req.AdminURL, sdk.Errorf(sdk.CodeConflict, "vhost %q does not exist; provision the slice first (binky up does)", s.vhost), hints)
	}
	if err := req.CheckClaim(s.what(), v.Description); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	pw, err := r.grant(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints, pw)
	}
	user := s.user()
	if s.cfg.user == "" {
		pw = s.ep.Password
	}
	return httpx.Resolved(amqpURL(s.ep.Base.Hostname(), s.cfg, user, pw, s.vhost), map[string]string{"vhost": s.vhost}), nil
}

// Clone is not offered: a RabbitMQ slice is built by provision, migrate
// and seed (a vhost's messages cannot be copied server-side).
func (*RabbitMQ) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone rabbitmq slice %q from %q: the rabbitmq adapter does not clone; build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy deletes the vhost (its queues, exchanges and messages with it)
// and, with user = "per-slice", the slice's user. A vhost another owner
// claimed is refused with code conflict, and neither it nor the user is
// touched; a slice already gone is fine.
func (r *RabbitMQ) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy rabbitmq slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if req.Owner != "" {
		v, err := r.lookup(ctx, s)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
		if v != nil {
			if err := req.CheckClaim(s.what(), v.Description); err != nil {
				return nil, httpx.Fail(op, req.AdminURL, err, hints)
			}
		}
	}
	if _, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodDelete, URL: s.ep.URL(nil, "api", "vhosts", s.vhost)}, nil, http.StatusNotFound); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("delete vhost %q: %w", s.vhost, err), hints)
	}
	if s.cfg.user == PerSlice {
		if _, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodDelete, URL: s.ep.URL(nil, "api", "users", s.vhost)}, nil, http.StatusNotFound); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("delete user %q: %w", s.vhost, err), hints)
		}
	}
	return &sdk.DestroyResponse{}, nil
}

// grant sets the per-slice user (when configured) and the slice user's
// permissions on the vhost; it returns the per-slice user's password, or
// "" for the other modes.
func (r *RabbitMQ) grant(ctx context.Context, s *slice) (string, error) {
	user := s.user()
	var pw string
	switch s.cfg.user {
	case PerSlice:
		key, err := r.secret(ctx, s.ep)
		if err != nil {
			return "", err
		}
		pw = derivePassword(key, user)
		if _, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, "api", "users", user),
			JSON: map[string]any{"password": pw, "tags": ""}}, nil); err != nil {
			return pw, fmt.Errorf("set user %q: %w", user, err)
		}
	case "":
	default:
		if err := r.checkNamedUser(ctx, s); err != nil {
			return "", err
		}
	}
	_, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, "api", "permissions", s.vhost, user),
		JSON: map[string]string{"configure": ".*", "write": ".*", "read": ".*"}}, nil)
	if err != nil {
		var st *httpx.StatusError
		if errors.As(err, &st) && st.Status == http.StatusNotFound {
			return pw, sdk.Errorf(sdk.CodeConflict, "grant %q permissions on vhost %q: the vhost or user vanished meanwhile; run binky up again", user, s.vhost)
		}
		return pw, fmt.Errorf("grant %q permissions on vhost %q: %w", user, s.vhost, err)
	}
	return pw, nil
}

// checkNamedUser checks that the user config.user names exists: binky
// does not know its password, so it cannot make it.
func (r *RabbitMQ) checkNamedUser(ctx context.Context, s *slice) error {
	user := s.cfg.user
	resp, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: s.ep.URL(nil, "api", "users", user)}, nil, http.StatusNotFound)
	if err != nil {
		return fmt.Errorf("look up user %q: %w", user, err)
	}
	if resp.Status == http.StatusNotFound {
		return sdk.Errorf(sdk.CodeInvalid, "config %s names user %q, which does not exist on the server; create it, or use %s = %q", KeyUser, user, KeyUser, PerSlice)
	}
	return nil
}

var _ sdk.Adapter = (*RabbitMQ)(nil)
