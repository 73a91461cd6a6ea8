package qdrant

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-qdrant.
const Name = "qdrant"

const example = "http://:API-KEY@127.0.0.1:6333"

var hints = httpx.Hints{
	sdk.CodeUnreachable: "is Qdrant running, and is admin_url its REST endpoint (port 6333), like " + example + "?",
	sdk.CodeAuth:        "check the API key, written as admin_url's password (" + example + ")",
}

// Qdrant is the adapter. It holds one HTTP client for every call.
type Qdrant struct {
	http *httpx.Client
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Qdrant { return &Qdrant{http: httpx.New()} }

// Describe says who the adapter is: qdrant, unable to clone, claiming its
// slices.
func (*Qdrant) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Clone: false, Claims: true}, nil
}

type slice struct {
	ep          *httpx.Endpoint
	prefix      string
	collections []collection
}

func target(t *sdk.Target) (*slice, error) {
	if !names.IsSlice(t.Slice) {
		return nil, sdk.Errorf(sdk.CodeInvalid, "%q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", t.Slice)
	}
	prefix := names.IndexPrefix(t.Slice)
	cs, err := parseConfig(t.Config, prefix)
	if err != nil {
		return nil, err
	}
	ep, err := httpx.ParseAdminURL(t.AdminURL, example)
	if err != nil {
		return nil, err
	}
	ep.KeyHeader = "api-key"
	return &slice{ep: ep, prefix: prefix, collections: cs}, nil
}

// Provision records the caller's owner claim in the marker collection,
// then creates each configured collection that is missing. A slice (any
// collection under the prefix) claimed by another owner is refused with
// code conflict; one claimed by nobody is adopted. It reports whether all
// configured collections existed; with none configured, whether any
// collection was under the prefix, or, for a caller with no owner (which
// makes no marker), nothing.
func (q *Qdrant) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision qdrant slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	have, err := q.list(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	anyHad := len(owned(s.prefix, have)) > 0
	claim, err := q.checkClaim(ctx, s, &req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if claim == "" {
		if err := q.claim(ctx, s, &req.Target, have); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
	}
	if len(s.collections) == 0 {
		if req.Owner == "" {
			return &sdk.ProvisionResponse{}, nil
		}
		return sdk.Provisioned(anyHad), nil
	}
	all := true
	for _, c := range s.collections {
		name := s.prefix + c.Name
		if have[name] {
			continue
		}
		all = false
		body := map[string]any{"vectors": map[string]any{"size": c.Size, "distance": c.Distance}}
		resp, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, "collections", name), JSON: body}, nil, http.StatusConflict)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("create collection %s: %w", name, err), hints)
		}
		_ = resp // 409: made meanwhile by another up of the same slice
	}
	return sdk.Provisioned(all), nil
}

// Resolve answers the admin URL and values.prefix. It fails with code
// conflict when another owner claimed the slice or a configured collection
// is gone.
func (q *Qdrant) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve qdrant slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, err := q.checkClaim(ctx, s, &req.Target); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if len(s.collections) > 0 {
		have, err := q.list(ctx, s)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
		for _, c := range s.collections {
			if !have[s.prefix+c.Name] {
				return nil, httpx.Fail(op, req.AdminURL, sdk.Errorf(sdk.CodeConflict, "collection %s does not exist; provision the slice first (binky up does)", s.prefix+c.Name), hints)
			}
		}
	}
	u, _ := url.Parse(req.AdminURL)
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return httpx.Resolved(u.String(), map[string]string{"prefix": s.prefix}), nil
}

// Clone is not offered.
func (*Qdrant) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone qdrant slice %q from %q: the qdrant adapter does not clone; build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy deletes every collection whose name starts with the prefix, by
// name, the marker collection last, so a destroy that fails midway leaves
// the slice claimed. A slice another owner claimed is refused with code
// conflict before anything is deleted; a slice already gone is fine.
func (q *Qdrant) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy qdrant slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, err := q.checkClaim(ctx, s, &req.Target); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	have, err := q.list(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	for _, name := range markerLast(owned(s.prefix, have), s.marker()) {
		if _, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodDelete, URL: s.ep.URL(nil, "collections", name)}, nil, http.StatusNotFound); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("delete collection %s: %w", name, err), hints)
		}
	}
	return &sdk.DestroyResponse{}, nil
}

// owned is the collections of have under prefix, which must be a slice's
// prefix ("<slice>-"); for anything else it is nothing.
func owned(prefix string, have map[string]bool) []string {
	if !names.IsSlice(strings.TrimSuffix(prefix, "-")) || !strings.HasSuffix(prefix, "-") {
		return nil
	}
	var out []string
	for n := range have {
		if strings.HasPrefix(n, prefix) && len(n) > len(prefix) {
			out = append(out, n)
		}
	}
	return out
}

// markerLast is names, sorted, with marker, when among them, moved to the
// end.
func markerLast(names []string, marker string) []string {
	out := make([]string, 0, len(names))
	has := false
	for _, n := range names {
		if n == marker {
			has = true
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	if has {
		out = append(out, marker)
	}
	return out
}

// list returns the server's collection names: GET /collections.
func (q *Qdrant) list(ctx context.Context, s *slice) (map[string]bool, error) {
	var reply struct {
		Result struct {
			Collections []struct {
				Name string `json:"name"`
			} `json:"collections"`
		} `json:"result"`
	}
	if _, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: s.ep.URL(nil, "collections")}, &reply); err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	have := map[string]bool{}
	for _, c := range reply.Result.Collections {
		have[c.Name] = true
	}
	return have, nil
}

var _ sdk.Adapter = (*Qdrant)(nil)
