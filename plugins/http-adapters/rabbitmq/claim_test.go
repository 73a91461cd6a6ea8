package rabbitmq

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// owned is tgt with an owner, as a host that records claims sends it.
func owned(admin, slice, owner string, cfg map[string]any) sdk.Target {
	t := tgt(admin, slice, cfg)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// vhostOf reads a vhost's description and tags straight from the
// management API.
func vhostOf(t *testing.T, admin, vhost string) (desc string, tags []string) {
	t.Helper()
	ep, _ := httpx.ParseAdminURL(admin, example)
	var v struct {
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	}
	if _, err := httpx.New().Call(t.Context(), ep, httpx.Request{Method: http.MethodGet, URL: ep.URL(nil, "api", "vhosts", vhost)}, &v); err != nil {
		t.Fatalf("GET vhost %s: %v", vhost, err)
	}
	return v.Description, v.Tags
}

// destroyAtEnd destroys the slice as its owner when the test ends.
func destroyAtEnd(t *testing.T, tg sdk.Target) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tg}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", tg.Slice, err)
		}
	})
}

// TestClaimInDescription (real server): provision writes the claim as the
// vhost's description; another owner's provision, resolve and destroy are
// refused with code conflict naming the owner, and leave the vhost, its
// description and the per-slice user as they were; the owner's destroy
// removes both, and another owner's destroy of the gone slice is fine.
func TestClaimInDescription(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("claim")
	mine, theirs := owned(admin, s, "home-a", perSlice), owned(admin, s, "home-b", perSlice)
	destroyAtEnd(t, mine)
	if p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	} else if p.Existed == nil || *p.Existed {
		t.Errorf("provision of a new slice: existed %v; want false", p.Existed)
	}
	if d, _ := vhostOf(t, admin, s); d != mine.Claim() {
		t.Fatalf("description %q; want the claim %q", d, mine.Claim())
	}
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	for call, do := range map[string]func() error{
		"provision": func() error {
			_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
			return err
		},
		"resolve": func() error {
			_, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: theirs})
			return err
		},
		"destroy": func() error {
			_, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs})
			return err
		},
	} {
		err := do()
		if sdk.CodeOf(err) != sdk.CodeConflict || !strings.Contains(err.Error(), "home-a") {
			t.Errorf("%s by another owner: %v; want code conflict naming home-a", call, err)
		}
	}
	if d, _ := vhostOf(t, admin, s); d != mine.Claim() {
		t.Errorf("description after the refusals %q; want %q", d, mine.Claim())
	}
	if err := amqpOpen(r.Address); err != nil {
		t.Errorf("the owner's user opening its vhost after the refusals: %v", err)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	}
	if mgmt(t, admin, "api", "vhosts", s) != 404 || mgmt(t, admin, "api", "users", s) != 404 {
		t.Error("the owner's destroy left the vhost or its user")
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs}); err != nil {
		t.Errorf("another owner's destroy of a slice that is gone: %v; want ok", err)
	}
}

// TestClaimAdoption (real server): a vhost made without an owner — by an
// older host, or by hand with its own description and tags — is adopted by
// the first owner's provision: its description becomes the claim, its
// tags stay, and provision reports it existed; then another owner is
// refused. An older host (no owner) is not refused.
func TestClaimAdoption(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("adopt")
	provisionT(t, a, admin, s, nil)
	if d, _ := vhostOf(t, admin, s); d != "binky slice "+s {
		t.Errorf("description without an owner %q; want %q", d, "binky slice "+s)
	}
	ep, _ := httpx.ParseAdminURL(admin, example)
	if _, err := httpx.New().Call(t.Context(), ep, httpx.Request{Method: http.MethodPut, URL: ep.URL(nil, "api", "vhosts", s),
		JSON: map[string]any{"description": "made by hand", "tags": "keep,me"}}, nil); err != nil {
		t.Fatal(err)
	}
	if d, tags := vhostOf(t, admin, s); d != "made by hand" || !slices.Contains(tags, "keep") {
		t.Skipf("this RabbitMQ does not update a vhost's description and tags (%q, %v): adoption cannot be tested", d, tags)
	}
	mine, theirs := owned(admin, s, "home-a", nil), owned(admin, s, "home-b", nil)
	p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	if p.Existed == nil || !*p.Existed {
		t.Errorf("adopting provision: existed %v; want true", p.Existed)
	}
	if d, tags := vhostOf(t, admin, s); d != mine.Claim() || !slices.Contains(tags, "keep") || !slices.Contains(tags, "me") {
		t.Errorf("after adoption: description %q, tags %v; want the claim %q and tags keep, me", d, tags, mine.Claim())
	}
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("another owner after adoption: %v; want code conflict", err)
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, nil)}); err != nil {
		t.Errorf("resolve by an older host: %v", err)
	}
	// A new label of the same owner rewrites the claim.
	relabelled := mine
	relabelled.OwnerLabel = "moved home"
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: relabelled}); err != nil {
		t.Fatal(err)
	}
	if d, _ := vhostOf(t, admin, s); d != relabelled.Claim() {
		t.Errorf("description after a new label %q; want %q", d, relabelled.Claim())
	}
}

func TestTagList(t *testing.T) {
	for raw, want := range map[string]string{`["a","b"]`: "a,b", `[]`: "", `"a,b"`: "a,b", `null`: ""} {
		v := vhostInfo{Tags: json.RawMessage(raw)}
		if got := v.tagList(); got != want {
			t.Errorf("tagList(%s) = %q; want %q", raw, got, want)
		}
	}
}
