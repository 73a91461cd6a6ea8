package s3adapter

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// owned is target with an owner.
func owned(admin, slice, owner, label string) sdk.Target {
	t := target(admin, slice, nil)
	t.Owner, t.OwnerLabel = owner, label
	return t
}

// storedClaim reads a bucket's claim straight from the server: its
// binky-owner tag, and the body of its .binky-owner object ("" for none).
func storedClaim(t *testing.T, c *minio.Client, bucket string) (tag, object string) {
	t.Helper()
	ctx := t.Context()
	tg, err := c.GetBucketTagging(ctx, bucket)
	switch {
	case err == nil:
		tag = tg.ToMap()[claimTag]
	case minio.ToErrorResponse(err).Code != "NoSuchTagSet":
		t.Fatalf("read the tags of %s: %v", bucket, err)
	}
	o, err := c.GetObject(ctx, bucket, claimObject, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Fatalf("read %s/%s: %v", bucket, claimObject, err)
	}
	return tag, string(b)
}

// wantClaim checks that bucket carries claim where the adapter keeps it
// (the tag, or the object on a server without tagging) and nowhere else.
func wantClaim(t *testing.T, c *minio.Client, bucket, claim string, tagless bool) {
	t.Helper()
	tag, obj := storedClaim(t, c, bucket)
	want := [2]string{claim, ""}
	if tagless {
		want = [2]string{"", claim}
	}
	if got := [2]string{tag, obj}; got != want {
		t.Errorf("bucket %s: tag %s %q, object %s %q; want %q and %q", bucket, claimTag, tag, claimObject, obj, want[0], want[1])
	}
}

// TestClaim on MinIO, with the claim as a bucket tag and (as on a server
// without bucket tagging) as an object: provision records the owner's
// claim; another owner's provision, resolve and destroy are refused with
// code conflict, naming the owning home, and leave the bucket, its objects
// and the claim as they were; the owner resolves and destroys it, and the
// claim goes with the bucket.
func TestClaim(t *testing.T) {
	admin := adminURL(t)
	for _, tagless := range []bool{false, true} {
		t.Run(fmt.Sprintf("tagless=%v", tagless), func(t *testing.T) {
			ctx := t.Context()
			c := rawClient(t, admin)
			a, b := New(), New()
			a.tagless, b.tagless = tagless, tagless
			s := testSlice(t, "claim")
			cleanupSlice(t, admin, s)
			bucket := names.Bucket(s)
			mine := owned(admin, s, "home-a", "/home/a/.binky (alice)")
			theirs := owned(admin, s, "home-b", "/home/b/.binky (bob)")

			if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || *r.Existed {
				t.Fatalf("provision by its owner: %+v, %v; want existed false", r, err)
			}
			wantClaim(t, c, bucket, mine.Claim(), tagless)
			if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || !*r.Existed {
				t.Errorf("provision by its owner again: %+v, %v; want existed true", r, err)
			}
			if _, err := c.PutObject(ctx, bucket, "data.txt", strings.NewReader("alice's"), 7, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}

			refused := func(what string, err error) {
				t.Helper()
				if sdk.CodeOf(err) != sdk.CodeConflict {
					t.Errorf("%s by another owner: %v; want code conflict", what, err)
					return
				}
				if msg := err.Error(); !strings.Contains(msg, "home-a") || !strings.Contains(msg, "alice") || !strings.Contains(msg, bucket) {
					t.Errorf("%s by another owner: %q; want it to name the bucket and the owning home", what, msg)
				}
			}
			_, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
			refused("provision", err)
			_, err = b.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: theirs})
			refused("resolve", err)
			_, err = b.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
			refused("destroy", err)
			if _, err := c.StatObject(ctx, bucket, "data.txt", minio.StatObjectOptions{}); err != nil {
				t.Errorf("the owner's object after the refusals: %v", err)
			}
			wantClaim(t, c, bucket, mine.Claim(), tagless)
			if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
				t.Errorf("resolve by its owner: %v", err)
			}
			// An older host (no owner) is not checked.
			if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
				t.Errorf("resolve with no owner: %v", err)
			}

			for range 2 {
				if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
					t.Fatalf("destroy by its owner: %v", err)
				}
			}
			if ok, err := c.BucketExists(ctx, bucket); err != nil || ok {
				t.Fatalf("bucket %s exists = %v, %v after its owner's destroy; want gone", bucket, ok, err)
			}
			// Gone, it is nobody's: the other home may make it now.
			if _, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); err != nil {
				t.Fatalf("provision by the other home after the owner destroyed it: %v", err)
			}
			wantClaim(t, c, bucket, theirs.Claim(), tagless)
		})
	}
}

// TestClaimAdopt: a bucket an older host made (no claim; objects and a
// tag of the developer's in it) is adopted by the first owner that
// provisions it, keeping its objects and its other tags, and then refused
// to others; a binky-owner tag that holds no claim (written by hand) is
// replaced the same way.
func TestClaimAdopt(t *testing.T) {
	admin := adminURL(t)
	for _, tagless := range []bool{false, true} {
		t.Run(fmt.Sprintf("tagless=%v", tagless), func(t *testing.T) {
			ctx := t.Context()
			c := rawClient(t, admin)
			a := New()
			a.tagless = tagless
			s := testSlice(t, "legacy")
			bucket := names.Bucket(s)
			provisionT(t, a, admin, s)
			wantClaim(t, c, bucket, "", tagless)
			own, err := tags.NewTags(map[string]string{"team": "payments", claimTag: "set by hand"}, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SetBucketTagging(ctx, bucket, own); err != nil {
				t.Fatal(err)
			}
			if _, err := c.PutObject(ctx, bucket, "old.txt", strings.NewReader("old"), 3, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}

			mine := owned(admin, s, "home-a", "alice")
			if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || !*r.Existed {
				t.Fatalf("adopt: %+v, %v; want existed true", r, err)
			}
			tg, err := c.GetBucketTagging(ctx, bucket)
			if err != nil {
				t.Fatal(err)
			}
			want := mine.Claim()
			if tagless {
				want = "set by hand" // the tag is not the adapter's there
				if _, obj := storedClaim(t, c, bucket); obj != mine.Claim() {
					t.Errorf("claim object after adoption = %q; want %q", obj, mine.Claim())
				}
			}
			if m := tg.ToMap(); m["team"] != "payments" || m[claimTag] != want {
				t.Errorf("tags after adoption = %v; want team=payments kept and %s=%q", m, claimTag, want)
			}
			if _, err := c.StatObject(ctx, bucket, "old.txt", minio.StatObjectOptions{}); err != nil {
				t.Errorf("the old object after adoption: %v", err)
			}
			other := New()
			other.tagless = tagless
			_, err = other.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "home-b", "bob")})
			if sdk.CodeOf(err) != sdk.CodeConflict {
				t.Errorf("provision by another home after adoption: %v; want code conflict", err)
			}
		})
	}
}

// TestNoTagging: the replies that mean a server has no bucket tagging, and
// some that do not.
func TestNoTagging(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{minio.ErrorResponse{Code: "NotImplemented", StatusCode: 501}, true},
		{fmt.Errorf("get tags: %w", minio.ErrorResponse{Code: "NotImplemented"}), true},
		{&minio.ErrorResponse{Code: "Whatever", StatusCode: 501}, true},
		{minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, false},
		{minio.ErrorResponse{Code: "NoSuchTagSet", StatusCode: 404}, false},
		{fmt.Errorf("dial tcp: refused"), false},
	} {
		if got := noTagging(tc.err); got != tc.want {
			t.Errorf("noTagging(%v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}
