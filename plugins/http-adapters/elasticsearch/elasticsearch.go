package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-elasticsearch.
const Name = "elasticsearch"

// example is a placeholder, never a real credential: a hint quoting a
// password that is also a secret of the user would be redacted to ***.
const example = "http://USER:PASSWORD@127.0.0.1:9200"

var hints = httpx.Hints{
	sdk.CodeUnreachable: "is Elasticsearch/OpenSearch running, and is admin_url its REST endpoint, like " + example + "?",
	sdk.CodeAuth:        "check admin_url's user and password; the user needs to create, list and delete indices",
}

// Elasticsearch is the adapter. It holds one HTTP client for every call.
type Elasticsearch struct {
	http *httpx.Client
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Elasticsearch { return &Elasticsearch{http: httpx.New()} }

// Describe says who the adapter is: elasticsearch (alias opensearch),
// unable to clone, claiming its slices.
func (*Elasticsearch) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"opensearch"}, Clone: false, Claims: true}, nil
}

type slice struct {
	ep      *httpx.Endpoint
	prefix  string
	indices []index
}

func target(t *sdk.Target) (*slice, error) {
	if !names.IsSlice(t.Slice) {
		return nil, sdk.Errorf(sdk.CodeInvalid, "%q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", t.Slice)
	}
	prefix := names.IndexPrefix(t.Slice)
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	ix, err := parseConfig(t.Config, prefix)
	if err != nil {
		return nil, err
	}
	ep, err := httpx.ParseAdminURL(t.AdminURL, example)
	if err != nil {
		return nil, err
	}
	return &slice{ep: ep, prefix: prefix, indices: ix}, nil
}

// Provision records the caller's owner claim in the marker index, then
// creates each configured index that is missing. A slice (any index under
// the prefix) claimed by another owner is refused with code conflict; one
// claimed by nobody is adopted. It reports whether all configured indices
// existed; with none configured, whether any index was under the prefix,
// or, for a caller with no owner (which makes no marker), nothing.
func (e *Elasticsearch) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision %s slice %q", adapterName(req.Adapter), req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	listed, err := e.list(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	claim, found, err := e.checkClaim(ctx, s, &req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if claim == "" {
		if err := e.claim(ctx, s, &req.Target, found); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
	}
	if len(s.indices) == 0 {
		if req.Owner == "" {
			return &sdk.ProvisionResponse{}, nil
		}
		return sdk.Provisioned(len(listed) > 0), nil
	}
	all := true
	for _, ix := range s.indices {
		name := s.prefix + ix.Name
		resp, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodHead, URL: s.ep.URL(nil, name)}, nil, http.StatusNotFound)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("look up index %s: %w", name, err), hints)
		}
		if resp.Status != http.StatusNotFound {
			continue
		}
		all = false
		r := httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, name)}
		if ix.Body != nil {
			r.JSON = ix.Body
		}
		if _, err := e.http.Call(ctx, s.ep, r, nil); err != nil {
			if errorType(err) == "resource_already_exists_exception" {
				continue // made meanwhile by another up of the same slice
			}
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("create index %s: %w", name, err), hints)
		}
	}
	return sdk.Provisioned(all), nil
}

// Resolve answers the admin URL and values.prefix. It fails with code
// conflict when another owner claimed the slice or a configured index is
// gone.
func (e *Elasticsearch) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve %s slice %q", adapterName(req.Adapter), req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, _, err := e.checkClaim(ctx, s, &req.Target); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	for _, ix := range s.indices {
		name := s.prefix + ix.Name
		resp, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodHead, URL: s.ep.URL(nil, name)}, nil, http.StatusNotFound)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("look up index %s: %w", name, err), hints)
		}
		if resp.Status == http.StatusNotFound {
			return nil, httpx.Fail(op, req.AdminURL, sdk.Errorf(sdk.CodeConflict, "index %s does not exist; provision the slice first (binky up does)", name), hints)
		}
	}
	return httpx.Resolved(address(req.AdminURL), map[string]string{"prefix": s.prefix}), nil
}

// address is the admin URL as the application reaches the cluster: its
// credentials and path kept, query and fragment dropped.
func address(raw string) string {
	u, _ := url.Parse(raw)
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// Clone is not offered.
func (*Elasticsearch) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone %s slice %q from %q: the elasticsearch adapter does not clone; build the slice with provision, migrate and seed", adapterName(req.Adapter), req.Slice, req.Source)
}

// Destroy deletes every index under the prefix, each by its concrete name
// after listing them; never a wildcard. The marker index goes last, so a
// destroy that fails midway leaves the slice claimed. A slice another
// owner claimed is refused with code conflict before anything is deleted;
// a slice already gone is fine.
func (e *Elasticsearch) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy %s slice %q", adapterName(req.Adapter), req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, _, err := e.checkClaim(ctx, s, &req.Target); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	listed, err := e.list(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	doomed, err := deletable(s.prefix, listed)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, httpx.WithCode(sdk.CodeConflict, err), hints)
	}
	doomed = markerLast(doomed, s.marker())
	for _, name := range doomed {
		if _, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodDelete, URL: s.ep.URL(nil, name)}, nil, http.StatusNotFound); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("delete index %s: %w", name, err), hints)
		}
	}
	return &sdk.DestroyResponse{}, nil
}

// markerLast is names with marker, when among them, moved to the end.
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
	if has {
		out = append(out, marker)
	}
	return out
}

// list returns the names of the indices under the prefix, open, closed
// and hidden: GET /_cat/indices/<prefix>*?format=json&h=index.
func (e *Elasticsearch) list(ctx context.Context, s *slice) ([]string, error) {
	q := url.Values{"format": {"json"}, "h": {"index"}, "expand_wildcards": {"all"}}
	var rows []struct {
		Index string `json:"index"`
	}
	// The pattern is one path segment: "<prefix>*", the '*' left as is.
	u := s.ep.Base.String() + "/_cat/indices/" + url.PathEscape(s.prefix) + "*?" + q.Encode()
	if _, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: u}, &rows); err != nil {
		return nil, fmt.Errorf("list indices %s*: %w", s.prefix, err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Index)
	}
	return out, nil
}

// errorType is the error.type of an Elasticsearch error reply, or "".
func errorType(err error) string {
	var st *httpx.StatusError
	if !errors.As(err, &st) {
		return ""
	}
	var body struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(st.Raw, &body) != nil {
		return ""
	}
	return body.Error.Type
}

func adapterName(requested string) string {
	if requested == "opensearch" {
		return requested
	}
	return Name
}

var _ sdk.Adapter = (*Elasticsearch)(nil)
