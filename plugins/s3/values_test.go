package s3adapter

import (
	"net"
	"slices"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/binkyhq/binky/sdk/names"
)

// TestResolveValues: bucket, keys (the secret key listed secret), host
// and port; a client built from the parts reaches the bucket on MinIO.
func TestResolveValues(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice(t, "vals")
	provisionT(t, a, admin, s)
	r := resolveT(t, a, admin, s)
	v := r.Values
	ep, _ := parseURL(admin)
	if v["bucket"] != names.Bucket(s) || v["access_key"] != ep.access || v["secret_key"] != ep.secret || v["user"] != ep.access || v["password"] != ep.secret {
		t.Errorf("values bucket %q access_key %q user %q (keys right: %v); want %q and the admin's keys", v["bucket"], v["access_key"], v["user"], v["secret_key"] == ep.secret, names.Bucket(s))
	}
	for _, k := range []string{"secret_key", "password"} {
		if !slices.Contains(r.Secret, k) {
			t.Errorf("secret %v; want %s listed", r.Secret, k)
		}
	}
	c, err := minio.New(net.JoinHostPort(v["host"], v["port"]), &minio.Options{
		Creds: credentials.NewStaticV4(v["access_key"], v["secret_key"], ""), Region: v["region"], BucketLookup: minio.BucketLookupPath, MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := c.BucketExists(t.Context(), v["bucket"])
	if err != nil || !ok {
		t.Errorf("the bucket through a client built from the values: exists %v, %v; want true", ok, err)
	}
}

// TestResolvedParts: the parts of an endpoint without a server.
func TestResolvedParts(t *testing.T) {
	for raw, hostPort := range map[string][2]string{
		"http://AK:SK@127.0.0.1:9000":       {"127.0.0.1", "9000"},
		"https://AK:SK@s3.example.com":      {"s3.example.com", "443"},
		"http://AK:SK@minio.local?region=x": {"minio.local", "80"},
	} {
		ep, err := parseURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		v := ep.resolved("acme-main").Values
		if v["host"] != hostPort[0] || v["port"] != hostPort[1] || v["access_key"] != "AK" || v["secret_key"] != "SK" || v["bucket"] != "acme-main" {
			t.Errorf("%s: values %v; want host %s port %s", raw, v, hostPort[0], hostPort[1])
		}
	}
}
