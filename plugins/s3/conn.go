package s3adapter

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/binkyhq/binky/sdk"
)

// server is one admin URL's client. It lives as long as the process.
type server struct {
	ep     *endpoint
	client *minio.Client
}

// server returns the client of an admin URL and region, creating it on
// first use. The client connects lazily.
func (a *S3) server(raw, region string) (*server, error) {
	ep, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	if ep.bucket != "" {
		return nil, invalid(raw, "admin_url names bucket %q; give the server only (http://ACCESS_KEY:SECRET_KEY@host:port): binky makes a bucket per slice", ep.bucket)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := raw + "\x00" + region
	if s, ok := a.servers[key]; ok {
		return s, nil
	}
	tr, err := minio.DefaultTransport(ep.secure)
	if err != nil {
		return nil, err
	}
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 30 * time.Second
	c, err := minio.New(ep.host, &minio.Options{
		Creds:        credentials.NewStaticV4(ep.access, ep.secret, ""),
		Secure:       ep.secure,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    tr,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, invalid(raw, "admin_url: %v", err)
	}
	s := &server{ep: ep, client: c}
	a.servers[key] = s
	return s, nil
}

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every secret of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: sdk.ScrubAdmin(op+": "+se.Message, raw)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: sdk.ScrubAdmin(oneLine(op+": "+err.Error())+hint(code), raw)}
}

// classify picks the reply code of a client error.
func classify(err error) sdk.Code {
	switch errorCode(err) {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed":
		return sdk.CodeAuth
	case "InvalidBucketName", "InvalidLocationConstraint", "IllegalLocationConstraintException":
		return sdk.CodeInvalid
	case "BucketAlreadyExists":
		return sdk.CodeConflict
	case "XMinioServerNotInitialized", "ServiceUnavailable", "SlowDown":
		return sdk.CodeUnreachable
	}
	if sdk.IsNetworkError(err) {
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the S3 server running, and are admin_url's scheme, host and port right?)"
	case sdk.CodeAuth:
		return " (check admin_url's access key and secret key; the key needs to create, list and delete buckets and objects)"
	case sdk.CodeConflict:
		return " (another account owns a bucket of that name; use another project name or server)"
	}
	return ""
}

// oneLine folds a multi-line message (some servers' error bodies) onto one
// line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isCode reports whether err is an S3 error reply with one of codes.
func isCode(err error, codes ...string) bool {
	c := errorCode(err)
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// errorCode is the S3 error code err carries (wrapped or not), or "".
func errorCode(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return r.Code
	}
	var rp *minio.ErrorResponse
	if errors.As(err, &rp) && rp != nil {
		return rp.Code
	}
	return ""
}
