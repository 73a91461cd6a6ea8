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
//
// The adapter claims slices (describe says claims:true): the owner's claim
// (sdk.Target.Claim) is the bucket's tag binky-owner, set beside its other
// tags. provision records it on a bucket it makes or one that has none
// (adoption); provision, resolve and destroy refuse a bucket another owner
// claimed with code conflict, touching nothing; the claim goes with the
// bucket. On a server without bucket tagging (NotImplemented) the claim is
// the object .binky-owner in the bucket instead, which the application
// sees in listings and could overwrite.
package s3adapter
