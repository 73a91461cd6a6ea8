package qdrant

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/apimodel"
	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

const modelKey = "m0del-Api-Key"

func model(t *testing.T) (*apimodel.Qdrant, string) {
	t.Helper()
	m := apimodel.NewQdrant(modelKey)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("", modelKey)
	return m, u.String()
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

func tgt(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

var twoCollections = map[string]any{KeyCollections: map[string]any{
	"docs":   map[string]any{"size": int64(4), "distance": "Cosine"},
	"images": map[string]any{"size": float64(8), "distance": "dot"},
}}

// TestSliceAgainstAPIModel: provision creates the configured collections
// under the prefix (existed false, then true); resolve answers the
// endpoint and prefix; destroy deletes exactly the prefix's collections.
func TestSliceAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	a := New()
	const s = "acme_main"
	m.AddCollection("acme_main_x-keep")
	m.AddCollection("acme_mainkeep")
	for i, want := range []bool{false, true} {
		p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(admin, s, twoCollections)})
		if err != nil {
			t.Fatalf("provision %d: %v", i+1, err)
		}
		if p.Existed == nil || *p.Existed != want {
			t.Errorf("provision %d: existed %v; want %v", i+1, p.Existed, want)
		}
	}
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, twoCollections)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Address != admin || r.Values["prefix"] != "acme_main-" {
		t.Errorf("resolve = %s %v; want %s and prefix acme_main-", r.Address, r.Values, admin)
	}
	m.AddCollection("acme_main-by-the-app")
	if got := m.Collections(); len(got) != 5 {
		t.Fatalf("collections %v; want 5", got)
	}
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if got, want := m.Collections(), []string{"acme_main_x-keep", "acme_mainkeep"}; !slices.Equal(got, want) {
		t.Errorf("collections after destroy %v; want %v", got, want)
	}
	for _, d := range m.Deletes() {
		if !strings.HasPrefix(d, "/collections/acme_main-") {
			t.Errorf("destroy sent DELETE %s", d)
		}
	}
	_, err = a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, twoCollections)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("resolve after destroy: %v; want code conflict", err)
	}
}

// TestErrorsAgainstAPIModel: the model's documented error replies map onto
// the codes a host acts on, in one line, without the key.
func TestErrorsAgainstAPIModel(t *testing.T) {
	_, admin := model(t)
	au, _ := url.Parse(admin)
	for _, tc := range []struct {
		name, admin string
		cfg         map[string]any
		want        sdk.Code
	}{
		{"bad_key", "http://:wr0ng-Api-Key@" + au.Host, nil, sdk.CodeAuth},
		{"no_key", "http://" + au.Host, twoCollections, sdk.CodeAuth},
		{"nothing_listens", "http://:" + modelKey + "@127.0.0.1:1", nil, sdk.CodeUnreachable},
		{"bad_distance", admin, map[string]any{KeyCollections: map[string]any{"a": map[string]any{"size": 4, "distance": "Hamming"}}}, sdk.CodeInvalid},
		{"no_size", admin, map[string]any{KeyCollections: map[string]any{"a": map[string]any{"distance": "Dot"}}}, sdk.CodeInvalid},
		{"bad_name", admin, map[string]any{KeyCollections: map[string]any{"a/b": map[string]any{"size": 4, "distance": "Dot"}}}, sdk.CodeInvalid},
		{"unknown_key", admin, map[string]any{"collection": 1}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(tc.admin, "acme_main", tc.cfg)})
			if err == nil {
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			for _, k := range []string{modelKey, "wr0ng-Api-Key"} {
				if strings.Contains(err.Error(), k) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error shows a key or spans lines: %q", err)
				}
			}
		})
	}
}

// TestServerRefusesAgainstAPIModel: a body the server refuses (a vector
// size of 0: 422) is code invalid; an existing collection (409) is
// conflict.
func TestServerRefusesAgainstAPIModel(t *testing.T) {
	m, admin := model(t)
	m.AddCollection("acme_main-x")
	s, _ := target(&sdk.Target{Slice: "acme_main", AdminURL: admin})
	c := httpx.New()
	for body, want := range map[string]sdk.Code{
		`{"vectors":{"size":0,"distance":"Dot"}}`: sdk.CodeInvalid,
		`{"vectors":{"size":4,"distance":"Dot"}}`: sdk.CodeConflict,
	} {
		_, err := c.Call(t.Context(), s.ep, httpx.Request{Method: "PUT", URL: s.ep.URL(nil, "collections", "acme_main-x"), Body: []byte(body), ContentType: "application/json"}, nil)
		if got := httpx.Classify(err); got != want {
			t.Errorf("PUT %s: code %q; want %q (%v)", body, got, want, err)
		}
	}
}

func TestOwned(t *testing.T) {
	have := map[string]bool{"a_b-x": true, "a_b-": true, "a_bx-y": true, "a_b_c-z": true, "other": true}
	if got := owned("a_b-", have); !slices.Equal(got, []string{"a_b-x"}) {
		t.Errorf("owned = %v; want [a_b-x]", got)
	}
	for _, bad := range []string{"", "-", "*-", "a_b"} {
		if got := owned(bad, map[string]bool{"x": true, "a_b-x": true}); got != nil {
			t.Errorf("owned(%q) = %v; want nothing", bad, got)
		}
	}
}

// FuzzDestroyTargets: whatever the slice and the server's collections,
// destroy deletes only names under that slice's prefix, none another
// slice owns.
func FuzzDestroyTargets(f *testing.F) {
	f.Add("acme_main", "acme_main-a\nacme_main_x-b\nacme_main-")
	f.Add("Feat/x", "p_feat-x-1-a")
	f.Fuzz(func(t *testing.T, rawSlice, listing string) {
		slice := rawSlice
		if !names.IsSlice(slice) {
			slice = names.Slice("p", names.Worktree(rawSlice))
		}
		have := map[string]bool{}
		for _, n := range strings.Split(listing, "\n") {
			have[n] = true
		}
		for _, n := range owned(names.IndexPrefix(slice), have) {
			if owner, _, _ := strings.Cut(n, "-"); owner != slice || n == slice+"-" {
				t.Fatalf("slice %q would delete %q", slice, n)
			}
		}
	})
}

// FuzzConfig: an admin URL and collections table either fail with code
// invalid without a piece of the key of sdk.MinScrub bytes, or the address
// resolve answers parses back through the adapter's own parser to the
// same endpoint and key.
func FuzzConfig(f *testing.F) {
	f.Add("http://:S3cr3t/9@127.0.0.1:6333", "docs", int64(4), "Cosine")
	f.Add("https://:k%40y@q.example/prefix?x=1", "a/b", int64(0), "Hamming")
	f.Add("http://:abc#def@h", "x", int64(8), "dot")
	f.Fuzz(func(t *testing.T, admin, name string, size int64, distance string) {
		cfg := map[string]any{KeyCollections: map[string]any{name: map[string]any{"size": size, "distance": distance}}}
		s, err := target(&sdk.Target{Slice: "acme_main", AdminURL: admin, Config: cfg})
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid (%v)", sdk.CodeOf(err), err)
			}
			msg := httpx.Fail("provision qdrant slice", admin, err, hints).Error()
			for _, p := range sdk.AdminPasswords(admin) {
				if q := leaked(msg, p); q != "" {
					t.Fatalf("error %q shows %q of the key", msg, q)
				}
			}
			return
		}
		u, _ := url.Parse(admin)
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		back, err := httpx.ParseAdminURL(u.String(), example)
		if err != nil {
			t.Fatalf("address %q does not parse back: %v", u, err)
		}
		if back.Base.String() != s.ep.Base.String() || back.Password != s.ep.Password {
			t.Fatalf("address %q reads back as %s", u, back.Base)
		}
	})
}

func leaked(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			if p := pw[i : i+sdk.MinScrub]; !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
