package elasticsearch

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"
	"github.com/binkyhq/binky/sdk"
)

const modelPW = "m0del-Pa55word"

// model starts the Elasticsearch API model with basic auth and returns it
// and an admin URL for it.
func model(t *testing.T) (*apimodel.Elasticsearch, string) {
	t.Helper()
	m := apimodel.NewElasticsearch("elastic", modelPW)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("elastic", modelPW)
	return m, u.String()
}

func hdr(adapter string) sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: adapter} }

func tgt(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

var twoIndices = map[string]any{KeyIndices: map[string]any{
	"events": map[string]any{"mappings": map[string]any{"properties": map[string]any{"at": map[string]any{"type": "date"}}}},
	"users":  map[string]any{"settings": `{"number_of_shards": 1}`},
}}

// TestSliceAgainstAPIModel: provision creates the configured indices under
// the prefix (existed false, then true), resolve answers the endpoint and
// the prefix, and destroy deletes exactly the prefix's indices, each by
// name, leaving a neighbour whose name merely starts alike.
func TestSliceAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	const s = "acme_main"
	m.AddIndex("acme_main_x-keep") // another slice's index: "acme_main_x-"
	m.AddIndex("acme_mainkeep")
	m.AddIndex(".security")
	for i, want := range []bool{false, true} {
		p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr("opensearch"), Target: tgt(admin, s, twoIndices)})
		if err != nil {
			t.Fatalf("provision %d: %v", i+1, err)
		}
		if p.Existed == nil || *p.Existed != want {
			t.Errorf("provision %d: existed %v; want %v", i+1, p.Existed, want)
		}
	}
	if got := m.Indices(); !slices.Contains(got, "acme_main-events") || !slices.Contains(got, "acme_main-users") {
		t.Fatalf("indices %v; want acme_main-events and acme_main-users", got)
	}
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(Name), Target: tgt(admin, s, twoIndices)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Address != admin || r.Values["prefix"] != "acme_main-" {
		t.Errorf("resolve = %s %v; want %s and prefix acme_main-", r.Address, r.Values, admin)
	}
	m.AddIndex("acme_main-made-by-the-app")
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(Name), Target: tgt(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if got, want := m.Indices(), []string{".security", "acme_main_x-keep", "acme_mainkeep"}; !slices.Equal(got, want) {
		t.Errorf("indices after destroy %v; want %v", got, want)
	}
	for _, d := range m.Deletes() {
		if !strings.HasPrefix(d, "/acme_main-") || strings.ContainsAny(d, "*,") {
			t.Errorf("destroy sent DELETE %s; want only concrete names under acme_main-", d)
		}
	}
	_, err = a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(Name), Target: tgt(admin, s, twoIndices)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("resolve after destroy: %v; want code conflict", err)
	}
}

// TestErrorsAgainstAPIModel: the model's documented error replies map onto
// the codes a host acts on, in one line, without the password.
func TestErrorsAgainstAPIModel(t *testing.T) {
	_, admin := model(t)
	au, _ := url.Parse(admin)
	bad := "http://elastic:wr0ng-Pa55word@" + au.Host
	for _, tc := range []struct {
		name, admin string
		cfg         map[string]any
		want        sdk.Code
	}{
		{"bad_password", bad, nil, sdk.CodeAuth},
		{"bad_password_indices", bad, twoIndices, sdk.CodeAuth},
		{"no_credentials", "http://" + au.Host, twoIndices, sdk.CodeAuth},
		{"nothing_listens", "http://elastic:" + modelPW + "@127.0.0.1:1", nil, sdk.CodeUnreachable},
		{"index_name_refused", admin, map[string]any{KeyIndices: []any{"Upper"}}, sdk.CodeInvalid},
		{"index_wildcard", admin, map[string]any{KeyIndices: []any{"x*"}}, sdk.CodeInvalid},
		{"settings_not_json", admin, map[string]any{KeyIndices: map[string]any{"a": map[string]any{"settings": "{"}}}, sdk.CodeInvalid},
		{"unknown_key", admin, map[string]any{"templates": 1}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(Name), Target: tgt(tc.admin, "acme_main", tc.cfg)})
			if err == nil {
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			for _, pw := range []string{modelPW, "wr0ng-Pa55word"} {
				if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error shows a password or spans lines: %q", err)
				}
			}
		})
	}
}

// TestIndexExistsAgainstAPIModel: an index created between provision's
// lookup and its PUT (resource_already_exists_exception, 400) is not an
// error; a name the server refuses (invalid_index_name_exception, 400) is
// code invalid.
func TestIndexExistsAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	s, _ := target(&sdk.Target{Slice: "acme_main", AdminURL: admin})
	m.AddIndex("acme_main-events")
	_, err := a.http.Call(t.Context(), s.ep, putIndex(s, "acme_main-events"), nil)
	if errorType(err) != "resource_already_exists_exception" {
		t.Errorf("PUT of an existing index: %v; want resource_already_exists_exception", err)
	}
	_, err = a.http.Call(t.Context(), s.ep, putIndex(s, "Bad"), nil)
	if errorType(err) != "invalid_index_name_exception" || sdk.CodeOf(failT(err)) != sdk.CodeInvalid {
		t.Errorf("PUT of a refused name: %v; want invalid_index_name_exception, code invalid", err)
	}
}

func TestCloneUnsupported(t *testing.T) {
	_, err := New().Clone(t.Context(), &sdk.CloneRequest{Header: hdr(Name), Target: tgt("http://127.0.0.1:1", "p_b", nil), Source: "p_a"})
	if sdk.CodeOf(err) != sdk.CodeUnsupported {
		t.Errorf("clone: %v; want code unsupported", err)
	}
}
