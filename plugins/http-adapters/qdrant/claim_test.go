package qdrant

import (
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"
	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// claimed is tgt with an owner, as a host that records claims sends it.
func claimed(admin, slice, owner string, cfg map[string]any) sdk.Target {
	t := tgt(admin, slice, cfg)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// payloadClaim is the claim in the marker collection's point in the model.
func payloadClaim(m *apimodel.Qdrant, collection string) string {
	p, _ := m.Payload(collection, "1")
	c, _ := p[payloadKey].(string)
	return c
}

// TestClaimAgainstAPIModel: provision makes the marker collection with the
// claim in its point's payload; another owner's provision, resolve and
// destroy are refused with code conflict and delete nothing; the owner's
// destroy deletes the marker last.
func TestClaimAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	const s = "acme_main"
	mine, theirs := claimed(admin, s, "home-a", twoCollections), claimed(admin, s, "home-b", twoCollections)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	}
	marker := "acme_main-" + MarkerCollection
	if got := payloadClaim(m, marker); got != mine.Claim() {
		t.Fatalf("claim in %s %q; want %q", marker, got, mine.Claim())
	}
	m.AddCollection("acme_main-by-the-app")
	before := m.Collections()
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
	if got := m.Collections(); !slices.Equal(got, before) || len(m.Deletes()) != 0 {
		t.Errorf("after the refusals: collections %v (want %v), deletes %v (want none)", got, before, m.Deletes())
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
		t.Errorf("resolve by the owner: %v", err)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	}
	if got := m.Collections(); len(got) != 0 {
		t.Errorf("collections after the owner's destroy %v; want none", got)
	}
	if d := m.Deletes(); len(d) == 0 || d[len(d)-1] != "/collections/"+marker {
		t.Errorf("deletes %v; want the marker last", d)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs}); err != nil {
		t.Errorf("another owner's destroy of a slice that is gone: %v; want ok", err)
	}
}

// TestClaimAdoptionAgainstAPIModel: collections under the prefix with no
// marker (an older host's slice) are adopted by the first owner's
// provision, which reports they existed; a marker collection with no
// claim point (a provision stopped midway) gets one; an older host (no owner) records nothing and is
// not refused.
func TestClaimAdoptionAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	m.AddCollection("old_main-docs")
	legacy := tgt(admin, "old_main", nil)
	p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: legacy})
	if err != nil || p.Existed != nil {
		t.Fatalf("provision without an owner: %+v, %v; want existed not reported", p, err)
	}
	if slices.Contains(m.Collections(), "old_main-"+MarkerCollection) {
		t.Fatal("a provision without an owner made a marker")
	}
	mine, theirs := claimed(admin, "old_main", "home-a", nil), claimed(admin, "old_main", "home-b", nil)
	p, err = a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	if p.Existed == nil || !*p.Existed {
		t.Errorf("adopting provision: existed %v; want true", p.Existed)
	}
	if got := payloadClaim(m, "old_main-"+MarkerCollection); got != mine.Claim() {
		t.Errorf("claim after adoption %q; want %q", got, mine.Claim())
	}
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("another owner after adoption: %v; want code conflict", err)
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: legacy}); err != nil {
		t.Errorf("resolve by an older host: %v", err)
	}

	// A marker collection without its point: what a provision that stopped
	// between creating the marker and writing the claim leaves.
	hand := claimed(admin, "hand_main", "home-a", nil)
	hs, _ := target(&hand)
	if _, err := a.http.Call(t.Context(), hs.ep, httpx.Request{Method: "PUT", URL: hs.ep.URL(nil, "collections", hs.marker()),
		JSON: map[string]any{"vectors": map[string]any{"size": 1, "distance": "Dot"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: hand}); err != nil {
		t.Fatal(err)
	}
	if got := payloadClaim(m, "hand_main-"+MarkerCollection); got != hand.Claim() {
		t.Errorf("claim on a marker made by hand %q; want %q", got, hand.Claim())
	}
}

// TestNewBarePrefixReportsExisted: with an owner, a bare prefix exists by
// its marker, so provision says false, then true.
func TestNewBarePrefixReportsExisted(t *testing.T) {
	_, admin := model(t)
	a := New()
	mine := claimed(admin, "acme_main", "home-a", nil)
	for i, want := range []bool{false, true} {
		p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
		if err != nil {
			t.Fatal(err)
		}
		if p.Existed == nil || *p.Existed != want {
			t.Errorf("provision %d: existed %v; want %v", i+1, p.Existed, want)
		}
	}
}

func TestMarkerNameReserved(t *testing.T) {
	cfg := map[string]any{KeyCollections: map[string]any{MarkerCollection: map[string]any{"size": 4, "distance": "Dot"}}}
	_, err := target(&sdk.Target{Slice: "acme_main", AdminURL: "http://127.0.0.1:6333", Config: cfg})
	if sdk.CodeOf(err) != sdk.CodeInvalid || !strings.Contains(err.Error(), MarkerCollection) {
		t.Errorf("config naming %s: %v; want code invalid", MarkerCollection, err)
	}
}

func TestMarkerLast(t *testing.T) {
	if got := markerLast([]string{"p-x", "p-binky-owner", "p-a"}, "p-binky-owner"); !slices.Equal(got, []string{"p-a", "p-x", "p-binky-owner"}) {
		t.Errorf("markerLast = %v", got)
	}
}
