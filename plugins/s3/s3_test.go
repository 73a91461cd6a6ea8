package s3adapter

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/names"
)

// TestConformance runs the sdk's conformance suite against the built
// binary on MinIO, under the name s3 and the alias minio.
func TestConformance(t *testing.T) {
	admin := adminURL(t)
	bin := adaptertest.Binary(t, "binky-adapter-s3")
	for _, name := range []string{"s3", "minio"} {
		t.Run(name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: name, AdminURL: admin})
		})
	}
}

// TestBucketPerSlice: provision reports existed false then true; resolve
// names the slice's bucket, whose address works for the application; a
// second slice's address cannot see the first one's objects through its
// bucket.
func TestBucketPerSlice(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	one, two := testSlice(t, "one"), testSlice(t, "two")
	if r := provisionT(t, a, admin, one); r.Existed == nil || *r.Existed {
		t.Errorf("first provision: existed %v; want false", r.Existed)
	}
	if r := provisionT(t, a, admin, one); r.Existed == nil || !*r.Existed {
		t.Errorf("second provision: existed %v; want true", r.Existed)
	}
	provisionT(t, a, admin, two)
	r1, r2 := resolveT(t, a, admin, one), resolveT(t, a, admin, two)
	if r1.Values["bucket"] != names.Bucket(one) || r1.Values["region"] != DefaultRegion || r1.Values["endpoint"] != "http://127.0.0.1:9000" && !strings.HasPrefix(admin, r1.Values["endpoint"]) {
		t.Errorf("resolve values %v; want bucket %s, region %s and the admin endpoint", r1.Values, names.Bucket(one), DefaultRegion)
	}
	if strings.Contains(r1.Values["endpoint"], "@") {
		t.Errorf("values.endpoint %q carries credentials", r1.Values["endpoint"])
	}
	ep1, err := parseURL(r1.Address)
	if err != nil || ep1.bucket != names.Bucket(one) {
		t.Fatalf("resolve address does not parse back to the bucket: %+v, %v", ep1, err)
	}
	ep2, _ := parseURL(r2.Address)
	c := rawClient(t, r1.Address)
	body := []byte("hello from one")
	if _, err := c.PutObject(ctx, ep1.bucket, "greeting.txt", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put through the slice's address: %v", err)
	}
	if _, err := c.StatObject(ctx, ep2.bucket, "greeting.txt", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Errorf("the second slice's bucket: stat greeting.txt = %v; want NoSuchKey", err)
	}
	o, err := c.GetObject(ctx, ep1.bucket, "greeting.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(o)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("read back %q, %v; want %q", got, err, body)
	}
}

// TestDestroyEmptiesEverything: destroy removes a bucket holding many
// objects (more than one delete batch), old versions, delete markers and an
// unfinished multipart upload, and leaves a neighbour alone. Destroying
// again is fine.
func TestDestroyEmptiesEverything(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	s, neighbour := testSlice(t, "gone"), testSlice(t, "keep")
	provisionT(t, a, admin, s)
	provisionT(t, a, admin, neighbour)
	c := rawClient(t, admin)
	b, nb := names.Bucket(s), names.Bucket(neighbour)
	put := func(bucket, key, v string) {
		t.Helper()
		if _, err := c.PutObject(ctx, bucket, key, strings.NewReader(v), int64(len(v)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s/%s: %v", bucket, key, err)
		}
	}
	for i := range 1100 {
		put(b, "many/"+strings.Repeat("k", i%7)+string(rune('a'+i%26))+"-"+itoa(i), "x")
	}
	if err := c.EnableVersioning(ctx, b); err != nil {
		t.Fatalf("enable versioning: %v", err)
	}
	put(b, "versioned", "v1")
	put(b, "versioned", "v2")
	if err := c.RemoveObject(ctx, b, "versioned", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err) // leaves a delete marker and two versions
	}
	core := minio.Core{Client: c}
	if _, err := core.NewMultipartUpload(ctx, b, "unfinished", minio.PutObjectOptions{}); err != nil {
		t.Fatalf("start a multipart upload: %v", err)
	}
	put(nb, "keep", "k")

	for i := range 2 {
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if ok, err := c.BucketExists(ctx, b); err != nil || ok {
		t.Errorf("bucket %s exists = %v, %v after destroy; want gone", b, ok, err)
	}
	if _, err := c.StatObject(ctx, nb, "keep", minio.StatObjectOptions{}); err != nil {
		t.Errorf("the neighbour's object after destroy: %v", err)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// TestErrorCodes: an unreachable server, wrong keys, a name that is not a
// slice, a bucket name the backend refuses and the unbuilt per-slice
// credentials each give a one-line error with the right code and no piece
// of the secret key.
func TestErrorCodes(t *testing.T) {
	admin := adminURL(t)
	const secret = "Wr0ng-S3cret-Key"
	ep, _ := parseURL(admin)
	wrong := "http://" + ep.access + ":" + secret + "@" + ep.host
	for _, tc := range []struct {
		name, admin, slice string
		cfg                map[string]any
		want               sdk.Code
	}{
		{"unreachable", "http://binky:" + secret + "@127.0.0.1:1", "bt_main", nil, sdk.CodeUnreachable},
		{"wrong_secret", wrong, "bt_main", nil, sdk.CodeAuth},
		{"not_a_slice", admin, "Not A Slice", nil, sdk.CodeInvalid},
		{"per_slice_credentials", admin, "bt_main", map[string]any{KeyCredentials: "per-slice"}, sdk.CodeInvalid},
		{"bad_region", admin, "bt_main", map[string]any{KeyRegion: "no/such"}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(tc.admin, tc.slice, tc.cfg)})
			if err == nil {
				cleanupSlice(t, tc.admin, tc.slice)
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if p := leakedPiece(err.Error(), secret); p != "" {
				t.Errorf("error %q shows %q of the secret", err, p)
			}
			t.Log(err)
		})
	}
	// A bucket name the server refuses answers InvalidBucketName, which
	// must read as invalid, wrapped as the adapter wraps it.
	refused := fmt.Errorf("create bucket: %w", minio.ErrorResponse{Code: "InvalidBucketName", StatusCode: 400})
	if got := classify(refused); got != sdk.CodeInvalid {
		t.Errorf("%v classified %q; want invalid", refused, got)
	}
}
