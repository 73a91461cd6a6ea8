package s3adapter

import (
	"net"

	"github.com/binkyhq/binky/sdk"
)

// Value keys of an s3 slice besides bucket, region and endpoint.
const (
	ValueAccessKey = "access_key"
	ValueSecretKey = "secret_key" // listed secret
)

// resolved is Resolve's answer for bucket: the address and the values
// bucket, region, endpoint, access_key and secret_key (secret; also as
// user and password, which an S3 URL's userinfo holds), host and port.
func (e *endpoint) resolved(bucket string) *sdk.ResolveResponse {
	res := &sdk.ResolveResponse{Address: e.sliceURL(bucket)}
	res.SetValue("bucket", bucket)
	res.SetValue("region", e.region)
	res.SetValue("endpoint", e.base())
	res.SetValue(ValueAccessKey, e.access)
	res.SetSecret(ValueSecretKey, e.secret)
	res.SetValue(sdk.ValueUser, e.access)
	res.SetSecret(sdk.ValuePassword, e.secret)
	host, port, err := net.SplitHostPort(e.host)
	if err != nil {
		host, port = e.host, "80"
		if e.secure {
			port = "443"
		}
	}
	res.SetValue(sdk.ValueHost, host)
	res.SetValue(sdk.ValuePort, port)
	return res
}
