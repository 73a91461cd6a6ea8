package elasticsearch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// MarkerIndex is the name, under the slice's prefix, of the index that
// holds the slice's owner claim: "<prefix>binky-owner". config indices
// may not name it.
const MarkerIndex = "binky-owner"

// metaKey is the key of the claim in the marker index's mapping _meta.
const metaKey = "binky_owner"

// marker is the slice's marker index.
func (s *slice) marker() string { return s.prefix + MarkerIndex }

// what names the slice and its cluster in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("index prefix %s on %s", s.prefix, s.ep.Base.Host)
}

// markerBody is the marker index as created: hidden (wildcard searches of
// the application's, like <prefix>*, do not expand to it), one shard with
// at most one replica, a strict mapping that takes no documents' fields,
// and the claim in the mapping's _meta.
func markerBody(claim string) map[string]any {
	return map[string]any{
		"settings": map[string]any{"index": map[string]any{
			"hidden":               true,
			"number_of_shards":     1,
			"auto_expand_replicas": "0-1",
		}},
		"mappings": map[string]any{
			"dynamic":    "strict",
			"properties": map[string]any{},
			"_meta":      map[string]any{metaKey: claim},
		},
	}
}

// readClaim returns the claim in the marker index's mapping _meta; found
// says whether the marker index exists (it may exist with no claim: made
// by hand).
func (e *Elasticsearch) readClaim(ctx context.Context, s *slice) (claim string, found bool, err error) {
	var reply map[string]struct {
		Mappings struct {
			Meta map[string]any `json:"_meta"`
		} `json:"mappings"`
	}
	resp, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: s.ep.URL(nil, s.marker(), "_mapping")}, &reply, http.StatusNotFound)
	if err != nil {
		return "", false, fmt.Errorf("read the owner claim of %s in the mapping of index %s: %w", s.prefix, s.marker(), err)
	}
	if resp.Status == http.StatusNotFound {
		return "", false, nil
	}
	c, _ := reply[s.marker()].Mappings.Meta[metaKey].(string)
	return c, true, nil
}

// checkClaim refuses t when another owner claimed the slice; it returns
// the claim it read and whether the marker index exists. It reads nothing
// for a target with no owner (an older host).
func (e *Elasticsearch) checkClaim(ctx context.Context, s *slice, t *sdk.Target) (claim string, found bool, err error) {
	if t.Owner == "" {
		return "", false, nil
	}
	if claim, found, err = e.readClaim(ctx, s); err != nil {
		return "", false, err
	}
	return claim, found, t.CheckClaim(s.what(), claim)
}

// claim makes the slice t's: it creates the marker index with t's claim,
// or, when the marker index exists with no claim (found), puts the claim
// in its mapping's _meta. A marker index another provision of the same
// slice made meanwhile is read back and checked. Nothing is recorded for
// a target with no owner.
func (e *Elasticsearch) claim(ctx context.Context, s *slice, t *sdk.Target, found bool) error {
	claim := t.Claim()
	if claim == "" {
		return nil
	}
	if found {
		if _, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, s.marker(), "_mapping"),
			JSON: map[string]any{"_meta": map[string]any{metaKey: claim}}}, nil); err != nil {
			return fmt.Errorf("record the owner claim of %s in the mapping of index %s: %w", s.prefix, s.marker(), err)
		}
		return nil
	}
	_, err := e.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, s.marker()), JSON: markerBody(claim)}, nil)
	if err == nil {
		return nil
	}
	if errorType(err) != "resource_already_exists_exception" {
		return fmt.Errorf("create the owner claim's index %s: %w", s.marker(), err)
	}
	got, _, err := e.checkClaim(ctx, s, t)
	if err != nil {
		return err
	}
	if got == "" {
		return e.claim(ctx, s, t, true)
	}
	return nil
}
