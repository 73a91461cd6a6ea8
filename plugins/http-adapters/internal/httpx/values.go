package httpx

import (
	"net/url"

	"github.com/binkyhq/binky/sdk"
)

// Resolved is a resolve answer for the address addr with the connection
// parts of addr as values: user and password (listed secret; empty when
// the URL has none), host and port (80 or 443 for an http or https URL
// naming none), then the adapter's own values.
func Resolved(addr string, values map[string]string) *sdk.ResolveResponse {
	res := &sdk.ResolveResponse{Address: addr}
	if u, err := url.Parse(addr); err == nil {
		port := ""
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
		res.SetConnParts(u, port)
	}
	for k, v := range values {
		res.SetValue(k, v)
	}
	return res
}
