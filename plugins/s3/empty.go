package s3adapter

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
)

// removeBucket empties bucket and removes it; a bucket that is not there
// is fine. Objects written while it runs can make the removal fail with
// BucketNotEmpty; it empties again, three times at most.
func removeBucket(ctx context.Context, c *minio.Client, bucket string) error {
	for attempt := 1; ; attempt++ {
		ok, err := c.BucketExists(ctx, bucket)
		if err != nil {
			return fmt.Errorf("look up bucket %q: %w", bucket, err)
		}
		if !ok {
			return nil
		}
		if err := emptyBucket(ctx, c, bucket); err != nil {
			return err
		}
		err = c.RemoveBucket(ctx, bucket)
		switch {
		case err == nil, isCode(err, "NoSuchBucket"):
			return nil
		case isCode(err, "BucketNotEmpty") && attempt < 3:
			continue
		}
		return fmt.Errorf("remove bucket %q: %w", bucket, err)
	}
}

// emptyBucket deletes every object version and delete marker in bucket,
// and aborts its unfinished multipart uploads.
func emptyBucket(ctx context.Context, c *minio.Client, bucket string) error {
	if err := deleteVersions(ctx, c, bucket); err != nil {
		return err
	}
	for u := range c.ListIncompleteUploads(ctx, bucket, "", true) {
		if u.Err != nil {
			if isCode(u.Err, "NoSuchBucket") {
				return nil
			}
			return fmt.Errorf("list the unfinished uploads of bucket %q: %w", bucket, u.Err)
		}
		if err := c.RemoveIncompleteUpload(ctx, bucket, u.Key); err != nil && !isCode(err, "NoSuchUpload", "NoSuchKey") {
			return fmt.Errorf("abort the upload of %q in bucket %q: %w", u.Key, bucket, err)
		}
	}
	return nil
}

// deleteVersions deletes every object version and delete marker in
// bucket, in batches (RemoveObjects sends up to 1000 keys a request).
func deleteVersions(ctx context.Context, c *minio.Client, bucket string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var listErr error
	listed := make(chan struct{})
	objs := make(chan minio.ObjectInfo)
	go func() {
		defer close(listed)
		defer close(objs)
		for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true}) {
			if o.Err != nil {
				listErr = o.Err
				return
			}
			select {
			case objs <- o:
			case <-ctx.Done():
				return
			}
		}
	}()
	var rmErr error
	for r := range c.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{GovernanceBypass: true}) {
		if rmErr == nil && r.Err != nil && !isCode(r.Err, "NoSuchKey", "NoSuchVersion") {
			rmErr = fmt.Errorf("delete object %q (version %q) in bucket %q: %w", r.ObjectName, r.VersionID, bucket, r.Err)
			cancel()
		}
	}
	cancel()
	<-listed
	if rmErr != nil {
		return rmErr
	}
	if listErr != nil && !isCode(listErr, "NoSuchBucket") {
		return fmt.Errorf("list the objects of bucket %q: %w", bucket, listErr)
	}
	return nil
}
