package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// adminURL is the ClickHouse HTTP interface the tests carve slices from:
// $BINKY_TEST_CLICKHOUSE_URL, default the private server scripts/testenv
// runs.
func adminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_CLICKHOUSE_URL")
	if u == "" {
		u = "http://binky:binky-test-pw@127.0.0.1:18123"
	}
	ep, err := httpx.ParseAdminURL(u, example)
	if err != nil {
		t.Fatalf("BINKY_TEST_CLICKHOUSE_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if _, err := httpx.New().Call(ctx, ep, httpx.Request{Method: http.MethodGet, URL: ep.URL(nil, "ping")}, nil); err != nil {
		adaptertest.MissingServer(t, "ClickHouse is not reachable ("+ep.Scrub(err.Error())+"); run scripts/testenv up (it installs and starts ClickHouse on 127.0.0.1:18123), or set BINKY_TEST_CLICKHOUSE_URL")
	}
	return u
}

func testSlice(suffix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

func tgt(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

func provisionT(t *testing.T, a *ClickHouse, admin, slice string, cfg map[string]any) *sdk.ProvisionResponse {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, slice, cfg)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
	res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
	return res
}

func resolveT(t *testing.T, a *ClickHouse, admin, slice string) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, slice, nil)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

// query runs stmt on the URL addr (an admin or slice URL, its database=
// included) the way an application would: POST with the URL as given.
func query(t *testing.T, addr, stmt string) (string, error) {
	t.Helper()
	ep, err := httpx.ParseAdminURL(addr, example)
	if err != nil {
		t.Fatalf("parse %s: %v", addr, err)
	}
	u := ep.Base.String() + "/?" + ep.Query.Encode()
	resp, err := httpx.New().Call(t.Context(), ep, httpx.Request{Method: http.MethodPost, URL: u, Body: []byte(stmt)}, nil)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(resp.Body)), nil
}
