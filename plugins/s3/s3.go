package s3adapter

import (
	"context"
	"fmt"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-s3.
const Name = "s3"

// S3 is the adapter. It is long-lived in the RPC tier: it keeps one client
// per admin URL and region across calls.
type S3 struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL and region
	// tagless treats every server as one with no bucket tagging, so
	// claims are claim objects; the tests set it to run that path on
	// MinIO, which has tagging.
	tagless bool
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *S3 { return &S3{servers: map[string]*server{}} }

// Describe says who the adapter is: s3 (alias minio), unable to clone,
// recording each slice's owner (see claimTag).
func (*S3) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"minio"}, Clone: false, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	srv     *server
	bucket  string
	region  string
	tagless bool // see S3.tagless
}

func (a *S3) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	ep, err := parseURL(t.AdminURL)
	if err != nil {
		return nil, err
	}
	region := cfg.region
	if region == "" {
		region = ep.region
	}
	if region == "" {
		region = DefaultRegion
	}
	srv, err := a.server(t.AdminURL, region)
	if err != nil {
		return nil, err
	}
	b := names.Bucket(t.Slice)
	if err := s3utils.CheckValidBucketNameStrict(b); err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalid, "slice %q maps to bucket %q, which S3 refuses: %v", t.Slice, b, err)
	}
	return &slice{srv: srv, bucket: b, region: region, tagless: a.tagless}, nil
}

// Provision makes the slice's bucket, reporting whether it was there, and
// claims it for the request's owner: it refuses a bucket another owner
// claimed, and records the owner's claim on one that has none (one it
// just made, or one an older host made, which it adopts).
func (a *S3) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision s3 slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	c := s.srv.client
	existed, err := c.BucketExists(ctx, s.bucket)
	if err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("look up bucket %q: %w", s.bucket, err))
	}
	if !existed {
		err = c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: s.region})
		switch {
		case isCode(err, "BucketAlreadyOwnedByYou"):
			existed = true
		case err != nil:
			return nil, fail(op, req.AdminURL, fmt.Errorf("create bucket %q in region %s: %w", s.bucket, s.region, err))
		}
	}
	if err := s.claim(ctx, &req.Target); err != nil {
		if !existed && sdk.CodeOf(err) != sdk.CodeConflict {
			// Leave no unclaimed bucket behind; RemoveBucket removes
			// only an empty one, so this never deletes data.
			_ = c.RemoveBucket(ctx, s.bucket)
		}
		return nil, fail(op, req.AdminURL, err)
	}
	return sdk.Provisioned(existed), nil
}

// Resolve answers the admin endpoint with the bucket as its path, and
// the values of resolved, once it has checked that no other
// owner claimed the bucket. With no owner it connects to nothing.
func (a *S3) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve s3 slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	ep := *s.srv.ep
	ep.region = s.region
	return ep.resolved(s.bucket), nil
}

// Clone is not offered: copying a bucket is O(objects).
func (*S3) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone s3 slice %q from %q: the s3 adapter does not clone (a bucket copy costs a request per object); build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy empties the slice's bucket — every object version, delete marker
// and unfinished multipart upload — and removes it, claim and all; when
// another owner claimed it, it touches nothing. A bucket already gone is
// fine.
func (a *S3) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy s3 slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := removeBucket(ctx, s.srv.client, s.bucket); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.DestroyResponse{}, nil
}

// Close forgets every client. minio-go clients hold only idle HTTP
// connections, which the process exiting closes.
func (a *S3) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.servers)
	return nil
}

var _ sdk.Adapter = (*S3)(nil)
