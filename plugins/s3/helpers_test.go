package s3adapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// defaultURL is the MinIO scripts/testenv starts.
const defaultURL = "http://binky:binky-testenv-secret@127.0.0.1:9000"

// adminURL is the server the tests carve buckets from: BINKY_TEST_S3_URL,
// else scripts/testenv's MinIO. A server that does not answer fails the
// test when CI=true and skips it otherwise.
func adminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_S3_URL")
	if u == "" {
		u = defaultURL
	}
	c := rawClient(t, u)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if _, err := c.ListBuckets(ctx); err != nil {
		adaptertest.MissingServer(t, "MinIO is not reachable at "+sdk.ScrubAdmin(u, u)+": "+sdk.ScrubAdmin(err.Error(), u)+"; run scripts/testenv up (builds MinIO once, then starts it on 127.0.0.1:9000) or set BINKY_TEST_S3_URL")
	}
	return u
}

// rawClient is a minio-go client on an admin URL or resolve address.
func rawClient(t *testing.T, raw string) *minio.Client {
	t.Helper()
	ep, err := parseURL(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", sdk.ScrubAdmin(raw, raw), err)
	}
	c, err := minio.New(ep.host, &minio.Options{
		Creds: credentials.NewStaticV4(ep.access, ep.secret, ""), Secure: ep.secure,
		Region: DefaultRegion, BucketLookup: minio.BucketLookupPath, MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testSlice(t *testing.T, suffix string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func target(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

// cleanupSlice destroys a slice when the test ends, with a fresh adapter.
func cleanupSlice(t *testing.T, admin, slice string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, nil)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func provisionT(t *testing.T, a *S3, admin, slice string) *sdk.ProvisionResponse {
	t.Helper()
	cleanupSlice(t, admin, slice)
	r, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, nil)})
	if err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
	return r
}

func resolveT(t *testing.T, a *S3, admin, slice string) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, nil)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}
