// Package s3adapter is binky-adapter-s3 (alias minio): a slice is a bucket,
// names.Bucket(slice), on an S3-compatible server the developer already
// runs (MinIO, or any server speaking the S3 API with path-style
// requests).
//
// admin_url is http(s)://ACCESS_KEY:SECRET_KEY@host:port, optionally with
// ?region=R (default us-east-1). provision creates the bucket (reporting
// whether it existed); resolve answers the same URL with the bucket as its
// path, and values "bucket", "region" and "endpoint" (the URL without
// credentials or bucket); destroy removes every object version, delete
// marker and unfinished multipart upload, then the bucket. clone is not
// offered: copying objects costs O(objects), which is what clone_from exists
// to avoid, so describe says clone:false and Clone answers "unsupported".
//
// Slices share the admin credentials: the fence is the bucket name only.
// config credentials = "per-slice" (a key limited to the bucket) is not
// implemented and is refused with code invalid.
package s3adapter
