package elasticsearch

import (
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"
	"github.com/binkyhq/binky/sdk"
)

// owned is tgt with an owner, as a host that records claims sends it.
func owned(admin, slice, owner string, cfg map[string]any) sdk.Target {
	t := tgt(admin, slice, cfg)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// metaClaim is the claim in the _meta of an index's mapping in the model.
func metaClaim(m *apimodel.Elasticsearch, index string) string {
	meta, _ := m.Mapping(index)["_meta"].(map[string]any)
	c, _ := meta[metaKey].(string)
	return c
}

// TestClaimAgainstAPIModel: provision makes the hidden marker index with
// the claim in its mapping's _meta; another owner's provision, resolve and
// destroy are refused with code conflict and delete nothing; the owner's
// destroy deletes the marker last.
func TestClaimAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	const s = "acme_main"
	mine, theirs := owned(admin, s, "home-a", twoIndices), owned(admin, s, "home-b", twoIndices)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: mine}); err != nil {
		t.Fatal(err)
	}
	marker := "acme_main-" + MarkerIndex
	if got := metaClaim(m, marker); got != mine.Claim() {
		t.Fatalf("claim in %s's _meta %q; want %q", marker, got, mine.Claim())
	}
	if ix, _ := m.Settings(marker)["index"].(map[string]any); ix["hidden"] != true {
		t.Errorf("marker settings %v; want index.hidden true", m.Settings(marker))
	}
	m.AddIndex("acme_main-made-by-the-app")
	before := m.Indices()
	for call, do := range map[string]func() error{
		"provision": func() error {
			_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: theirs})
			return err
		},
		"resolve": func() error {
			_, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(Name), Target: theirs})
			return err
		},
		"destroy": func() error {
			_, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(Name), Target: theirs})
			return err
		},
		"destroy_bare": func() error {
			bare := theirs
			bare.Config = nil
			_, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr("opensearch"), Target: bare})
			return err
		},
	} {
		err := do()
		if sdk.CodeOf(err) != sdk.CodeConflict || !strings.Contains(err.Error(), "home-a") {
			t.Errorf("%s by another owner: %v; want code conflict naming home-a", call, err)
		}
	}
	if got := m.Indices(); !slices.Equal(got, before) || len(m.Deletes()) != 0 {
		t.Errorf("after the refusals: indices %v (want %v), deletes %v (want none)", got, before, m.Deletes())
	}
	if got := metaClaim(m, marker); got != mine.Claim() {
		t.Errorf("claim after the refusals %q; want %q", got, mine.Claim())
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(Name), Target: mine}); err != nil {
		t.Errorf("resolve by the owner: %v", err)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(Name), Target: mine}); err != nil {
		t.Fatal(err)
	}
	if got := m.Indices(); len(got) != 0 {
		t.Errorf("indices after the owner's destroy %v; want none", got)
	}
	if d := m.Deletes(); len(d) == 0 || d[len(d)-1] != "/"+marker {
		t.Errorf("deletes %v; want the marker last", d)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(Name), Target: theirs}); err != nil {
		t.Errorf("another owner's destroy of a slice that is gone: %v; want ok", err)
	}
}

// TestClaimAdoptionAgainstAPIModel: indices under the prefix with no
// marker (an older host's slice) are adopted by the first owner's
// provision, which reports they existed; a marker index made by hand
// without a claim gets the claim put into its _meta; an older host (no
// owner) records nothing, reports nothing for a bare prefix, and is not
// refused.
func TestClaimAdoptionAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	m.AddIndex("old_main-events")
	legacy := tgt(admin, "old_main", nil)
	p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: legacy})
	if err != nil || p.Existed != nil {
		t.Fatalf("provision without an owner: %+v, %v; want existed not reported", p, err)
	}
	if slices.Contains(m.Indices(), "old_main-"+MarkerIndex) {
		t.Fatal("a provision without an owner made a marker")
	}
	mine, theirs := owned(admin, "old_main", "home-a", nil), owned(admin, "old_main", "home-b", nil)
	p, err = a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	if p.Existed == nil || !*p.Existed {
		t.Errorf("adopting provision: existed %v; want true", p.Existed)
	}
	if got := metaClaim(m, "old_main-"+MarkerIndex); got != mine.Claim() {
		t.Errorf("claim after adoption %q; want %q", got, mine.Claim())
	}
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: theirs}); sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("another owner after adoption: %v; want code conflict", err)
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(Name), Target: legacy}); err != nil {
		t.Errorf("resolve by an older host: %v", err)
	}

	m.AddIndex("hand_main-" + MarkerIndex)
	hand := owned(admin, "hand_main", "home-a", nil)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: hand}); err != nil {
		t.Fatal(err)
	}
	if got := metaClaim(m, "hand_main-"+MarkerIndex); got != hand.Claim() {
		t.Errorf("claim on a marker made by hand %q; want %q", got, hand.Claim())
	}
}

// TestNewBarePrefixReportsExisted: with an owner, a bare prefix exists by
// its marker, so provision says false, then true.
func TestNewBarePrefixReportsExisted(t *testing.T) {
	_, admin := model(t)
	a := New()
	mine := owned(admin, "acme_main", "home-a", nil)
	for i, want := range []bool{false, true} {
		p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: mine})
		if err != nil {
			t.Fatal(err)
		}
		if p.Existed == nil || *p.Existed != want {
			t.Errorf("provision %d: existed %v; want %v", i+1, p.Existed, want)
		}
	}
}

func TestMarkerNameReserved(t *testing.T) {
	_, err := target(&sdk.Target{Slice: "acme_main", AdminURL: "http://127.0.0.1:9200", Config: map[string]any{KeyIndices: []any{MarkerIndex}}})
	if sdk.CodeOf(err) != sdk.CodeInvalid || !strings.Contains(err.Error(), MarkerIndex) {
		t.Errorf("config naming %s: %v; want code invalid", MarkerIndex, err)
	}
}
