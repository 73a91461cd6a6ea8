package qdrant

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// MarkerCollection is the name, under the slice's prefix, of the
// collection that holds the slice's owner claim: "<prefix>binky-owner".
// config collections may not name it.
const MarkerCollection = "binky-owner"

// claimPoint is the id of the marker collection's one point, whose
// payload holds the claim under payloadKey.
const (
	claimPoint = 1
	payloadKey = "binky_owner"
)

// marker is the slice's marker collection.
func (s *slice) marker() string { return s.prefix + MarkerCollection }

// what names the slice and its server in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("collection prefix %s on %s", s.prefix, s.ep.Base.Host)
}

// readClaim returns the claim in the payload of the marker collection's
// point, or "" when there is no marker collection or no such point.
func (q *Qdrant) readClaim(ctx context.Context, s *slice) (string, error) {
	var reply struct {
		Result struct {
			Payload map[string]any `json:"payload"`
		} `json:"result"`
	}
	resp, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: s.ep.URL(nil, "collections", s.marker(), "points", fmt.Sprint(claimPoint))}, &reply, http.StatusNotFound)
	if err != nil {
		return "", fmt.Errorf("read the owner claim of %s in collection %s: %w", s.prefix, s.marker(), err)
	}
	if resp.Status == http.StatusNotFound {
		return "", nil
	}
	c, _ := reply.Result.Payload[payloadKey].(string)
	return c, nil
}

// checkClaim refuses t when another owner claimed the slice; it returns
// the claim it read. It reads nothing for a target with no owner (an
// older host).
func (q *Qdrant) checkClaim(ctx context.Context, s *slice, t *sdk.Target) (string, error) {
	if t.Owner == "" {
		return "", nil
	}
	claim, err := q.readClaim(ctx, s)
	if err != nil {
		return "", err
	}
	return claim, t.CheckClaim(s.what(), claim)
}

// claim makes the slice t's: it creates the marker collection unless have
// lists it, then writes t's claim as its point's payload. A marker
// another provision of the same slice made meanwhile is read back and
// checked first. Nothing is recorded for a target with no owner.
func (q *Qdrant) claim(ctx context.Context, s *slice, t *sdk.Target, have map[string]bool) error {
	claim := t.Claim()
	if claim == "" {
		return nil
	}
	if !have[s.marker()] {
		body := map[string]any{"vectors": map[string]any{"size": 1, "distance": "Dot"}}
		resp, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, "collections", s.marker()), JSON: body}, nil, http.StatusConflict)
		if err != nil {
			return fmt.Errorf("create the owner claim's collection %s: %w", s.marker(), err)
		}
		if resp.Status == http.StatusConflict { // made meanwhile
			got, err := q.checkClaim(ctx, s, t)
			if err != nil || got != "" {
				return err
			}
		}
	}
	// wait=true: the reply comes once the point is written, so the next
	// call reads it.
	u := s.ep.URL(url.Values{"wait": {"true"}}, "collections", s.marker(), "points")
	body := map[string]any{"points": []any{map[string]any{"id": claimPoint, "vector": []float64{1}, "payload": map[string]any{payloadKey: claim}}}}
	if _, err := q.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: u, JSON: body}, nil); err != nil {
		return fmt.Errorf("record the owner claim of %s in collection %s: %w", s.prefix, s.marker(), err)
	}
	return nil
}
