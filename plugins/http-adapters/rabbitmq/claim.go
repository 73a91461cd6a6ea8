package rabbitmq

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// vhostInfo is what GET /api/vhosts/<v> says of a vhost that matters
// here: its description, which holds the owner claim, and its tags and
// default queue type, which an update of the description sends back to
// keep (a PUT without tags clears them).
type vhostInfo struct {
	Description      string          `json:"description"`
	Tags             json.RawMessage `json:"tags"`
	DefaultQueueType string          `json:"default_queue_type"`
}

// tagList is the vhost's tags as PUT /api/vhosts/<v> takes them: one
// comma-separated string. The API answers a list of strings (or, on some
// versions, that string already).
func (v *vhostInfo) tagList() string {
	var list []string
	if json.Unmarshal(v.Tags, &list) == nil {
		return strings.Join(list, ",")
	}
	var s string
	_ = json.Unmarshal(v.Tags, &s)
	return s
}

// what names the slice's vhost and server in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("vhost %q on %s", s.vhost, s.ep.Base.Host)
}

// lookup returns the vhost, or nil when it does not exist.
func (r *RabbitMQ) lookup(ctx context.Context, s *slice) (*vhostInfo, error) {
	var v vhostInfo
	resp, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodGet, URL: s.ep.URL(nil, "api", "vhosts", s.vhost)}, &v, http.StatusNotFound)
	if err != nil {
		return nil, fmt.Errorf("look up vhost %q: %w", s.vhost, err)
	}
	if resp.Status == http.StatusNotFound {
		return nil, nil
	}
	return &v, nil
}

// description is what provision writes as a vhost's description: the
// caller's claim, or, for a caller with no owner (an older host), words
// for people.
func description(t *sdk.Target) string {
	if c := t.Claim(); c != "" {
		return c
	}
	return "binky slice " + t.Slice
}

// putVhost creates the vhost with t's claim as its description, or, when
// the vhost exists (v), sets its description to the claim, keeping its
// tags. Then it reads the vhost back and checks the claim it finds: two
// provisions of one new slice by two owners racing leave the later one's
// claim, and the earlier one is refused here rather than sharing the
// vhost.
func (r *RabbitMQ) putVhost(ctx context.Context, s *slice, t *sdk.Target, v *vhostInfo) error {
	body := map[string]any{"description": description(t)}
	verb := "create"
	if v != nil {
		verb = "record the owner claim in the description of"
		body["tags"] = v.tagList()
		if q := v.DefaultQueueType; q != "" && q != "undefined" {
			body["default_queue_type"] = q
		}
	}
	if _, err := r.http.Call(ctx, s.ep, httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, "api", "vhosts", s.vhost), JSON: body}, nil); err != nil {
		return fmt.Errorf("%s vhost %q: %w", verb, s.vhost, err)
	}
	if t.Owner == "" {
		return nil
	}
	got, err := r.lookup(ctx, s)
	if err != nil {
		return err
	}
	if got == nil {
		return sdk.Errorf(sdk.CodeConflict, "vhost %q vanished while it was being provisioned; run binky up again", s.vhost)
	}
	if err := t.CheckClaim(s.what(), got.Description); err != nil {
		return err
	}
	if got.Description != t.Claim() {
		return sdk.Errorf(sdk.CodeConflict, "%s kept its description %q when binky set it to its owner claim (RabbitMQ before 3.9 cannot change an existing vhost's description): binky cannot adopt this vhost; delete it (rabbitmqctl delete_vhost) or upgrade RabbitMQ", s.what(), httpx.OneLine([]byte(got.Description)))
	}
	return nil
}
