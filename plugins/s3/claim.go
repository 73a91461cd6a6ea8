package s3adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/binkyhq/binky/sdk"
)

// claimTag is the bucket tag that records which binky home owns a slice's
// bucket; its value is the claim text (sdk.Target.Claim), which holds only
// characters a tag value takes and fits its 256. Setting it keeps the
// bucket's other tags.
const claimTag = "binky-owner"

// claimObject holds the claim on a server that has no bucket tagging
// (it answers NotImplemented): an object in the bucket whose body is the
// claim text. Unlike the tag, it is in the bucket's listing, and the
// application (which uses the same keys) can overwrite or delete it.
const claimObject = ".binky-owner"

// maxClaimObject bounds what is read of a claim object: a claim is at most
// 200 bytes.
const maxClaimObject = 1024

// what names the slice's bucket and server in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("bucket %q on %s", s.bucket, s.srv.ep.host)
}

// noTagging reports whether err says the server has no bucket tagging.
func noTagging(err error) bool {
	var r minio.ErrorResponse
	if !errors.As(err, &r) {
		var rp *minio.ErrorResponse
		if !errors.As(err, &rp) || rp == nil {
			return false
		}
		r = *rp
	}
	return r.Code == "NotImplemented" || r.StatusCode == http.StatusNotImplemented
}

// readClaim returns the claim recorded on the slice's bucket, or "" when
// there is none (no tag, or no bucket). tagless says the server has no
// bucket tagging, so the claim is (or will be) the claim object.
func (s *slice) readClaim(ctx context.Context) (claim string, tagless bool, err error) {
	if !s.tagless {
		t, err := s.srv.client.GetBucketTagging(ctx, s.bucket)
		switch {
		case err == nil:
			return t.ToMap()[claimTag], false, nil
		case isCode(err, "NoSuchTagSet", "NoSuchBucket"):
			return "", false, nil
		case !noTagging(err):
			return "", false, fmt.Errorf("read the owner claim of bucket %q (tag %s): %w", s.bucket, claimTag, err)
		}
	}
	o, err := s.srv.client.GetObject(ctx, s.bucket, claimObject, minio.GetObjectOptions{})
	if err == nil {
		defer o.Close()
		var b []byte
		b, err = io.ReadAll(io.LimitReader(o, maxClaimObject))
		if err == nil {
			return strings.TrimSpace(string(b)), true, nil
		}
	}
	if isCode(err, "NoSuchKey", "NoSuchBucket") {
		return "", true, nil
	}
	return "", true, fmt.Errorf("read the owner claim of bucket %q (object %s): %w", s.bucket, claimObject, err)
}

// checkClaim refuses t when another owner claimed the slice's bucket. It
// reads nothing for a target with no owner (an older host).
func (s *slice) checkClaim(ctx context.Context, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	have, _, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(), have)
}

// claim makes sure the slice's bucket, which exists, is claimed, and by
// t: it refuses another owner's claim, and records t's when there is none
// (adopting a bucket an older host made, or finishing one this call
// made). It reads the claim back after writing it, so of two homes
// claiming at once the one whose write landed last keeps the bucket and
// the other is refused — unless it read back before the second write,
// which no S3 request can rule out: a tag cannot be set only if absent.
// It does nothing for a target with no owner.
func (s *slice) claim(ctx context.Context, t *sdk.Target) error {
	mine := t.Claim()
	if mine == "" {
		return nil
	}
	have, tagless, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	if err := t.CheckClaim(s.what(), have); err != nil {
		return err
	}
	if _, ok := sdk.ClaimOwner(have); ok {
		return nil // t's own
	}
	if err := s.writeClaim(ctx, mine, tagless); err != nil {
		return err
	}
	got, _, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	if _, ok := sdk.ClaimOwner(got); !ok {
		return fmt.Errorf("record the owner claim of bucket %q: no claim reads back after writing one", s.bucket)
	}
	return t.CheckClaim(s.what(), got)
}

// writeClaim records claim on the slice's bucket: as its claimTag tag,
// keeping its other tags, or, on a server with no bucket tagging (tagless,
// or found so now), as its claim object.
func (s *slice) writeClaim(ctx context.Context, claim string, tagless bool) error {
	c := s.srv.client
	if !tagless {
		err := s.tag(ctx, claim)
		if err == nil || !noTagging(err) {
			return err
		}
	}
	if _, err := c.PutObject(ctx, s.bucket, claimObject, strings.NewReader(claim), int64(len(claim)), minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
		return fmt.Errorf("record the owner claim of bucket %q (object %s): %w", s.bucket, claimObject, err)
	}
	return nil
}

// tag sets the bucket's claimTag tag to claim, keeping its other tags.
func (s *slice) tag(ctx context.Context, claim string) error {
	c := s.srv.client
	m := map[string]string{}
	t, err := c.GetBucketTagging(ctx, s.bucket)
	switch {
	case err == nil:
		m = t.ToMap()
	case !isCode(err, "NoSuchTagSet"):
		return fmt.Errorf("read the tags of bucket %q: %w", s.bucket, err)
	}
	m[claimTag] = claim
	t, err = tags.NewTags(m, false)
	if err != nil {
		return fmt.Errorf("record the owner claim of bucket %q (tag %s): %w", s.bucket, claimTag, err)
	}
	if err := c.SetBucketTagging(ctx, s.bucket, t); err != nil {
		return fmt.Errorf("record the owner claim of bucket %q (tag %s): %w", s.bucket, claimTag, err)
	}
	return nil
}
