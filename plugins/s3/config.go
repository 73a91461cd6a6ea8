package s3adapter

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// The config keys the adapter reads.
const (
	// KeyRegion (string) is the region buckets are made in; it overrides
	// admin_url's ?region=.
	KeyRegion = "region"
	// KeyCredentials (string) says which keys a slice gets: "admin" (the
	// default, the admin_url's own). "per-slice" is refused: not built.
	KeyCredentials = "credentials"
)

// DefaultRegion is the region when neither admin_url nor config names one;
// MinIO's own default.
const DefaultRegion = "us-east-1"

// endpoint is a parsed admin_url (or resolve address).
type endpoint struct {
	secure bool   // https
	host   string // host:port
	access string // access key
	secret string // secret key
	region string // "" when the URL names none
	bucket string // the URL's path without '/', "" for none
}

// base is the endpoint's URL without credentials or bucket.
func (e *endpoint) base() string {
	u := url.URL{Scheme: "http", Host: e.host}
	if e.secure {
		u.Scheme = "https"
	}
	return u.String()
}

// sliceURL is the address of bucket: the admin endpoint with its
// credentials and region, and the bucket as its path.
func (e *endpoint) sliceURL(bucket string) string {
	u := url.URL{Scheme: "http", Host: e.host, Path: "/" + bucket, User: url.UserPassword(e.access, e.secret)}
	if e.secure {
		u.Scheme = "https"
	}
	if e.region != "" {
		u.RawQuery = url.Values{"region": {e.region}}.Encode()
	}
	return u.String()
}

// parseURL reads http(s)://ACCESS:SECRET@host[:port][/bucket][?region=R].
// Its errors never quote the URL: it holds a secret key.
func parseURL(raw string) (*endpoint, error) {
	if raw == "" {
		return nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like http://ACCESS_KEY:SECRET_KEY@127.0.0.1:9000")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, secret included
		}
		return nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	e := &endpoint{}
	switch u.Scheme {
	case "http":
	case "https":
		e.secure = true
	default:
		return nil, invalid(raw, "admin_url must start with http:// or https:// (the S3 endpoint); got scheme %q", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || !strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://") {
		return nil, invalid(raw, "admin_url names no server: use http://ACCESS_KEY:SECRET_KEY@127.0.0.1:9000")
	}
	if strings.Contains(raw, "#") {
		return nil, invalid(raw, "admin_url has a '#' (the start of a URL fragment); percent-encode a '#' in the keys as %%23")
	}
	if u.Port() == "" && strings.HasSuffix(u.Host, ":") {
		return nil, invalid(raw, "admin_url has an empty port")
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, invalid(raw, "admin_url has no access key: write http://ACCESS_KEY:SECRET_KEY@host:port")
	}
	secret, ok := u.User.Password()
	if !ok || secret == "" {
		return nil, invalid(raw, "admin_url has no secret key: write http://ACCESS_KEY:SECRET_KEY@host:port")
	}
	e.host, e.access, e.secret = u.Host, u.User.Username(), secret
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, invalid(raw, "admin_url's query does not parse: %v", err)
	}
	for k := range q {
		if k != "region" {
			return nil, invalid(raw, "admin_url has query parameter %q; the s3 adapter reads only region", k)
		}
	}
	e.region = q.Get("region")
	if e.region != "" && !validRegion(e.region) {
		return nil, invalid(raw, "admin_url's region %q is not a region name (letters, digits and '-')", e.region)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if strings.Contains(p, "/") {
			return nil, invalid(raw, "admin_url's path must be empty or name one bucket")
		}
		e.bucket = p
	}
	return e, nil
}

func validRegion(r string) bool {
	if len(r) > 64 {
		return false
	}
	for _, c := range r {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// settings are a request's config, checked.
type settings struct {
	region string // "" when config names none
}

func parseConfig(cfg map[string]any) (settings, error) {
	var s settings
	var unknown []string
	for k, v := range cfg {
		switch k {
		case KeyRegion:
			r, ok := v.(string)
			if !ok || !validRegion(r) || r == "" {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be a region name like %q; got %v", KeyRegion, DefaultRegion, v)
			}
			s.region = r
		case KeyCredentials:
			c, ok := v.(string)
			switch {
			case ok && c == "admin":
			case ok && c == "per-slice":
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s = \"per-slice\" is not supported by the s3 adapter yet: every slice uses admin_url's keys; remove the key or set it to \"admin\"", KeyCredentials)
			default:
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be \"admin\"; got %v", KeyCredentials, v)
			}
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return s, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the s3 adapter (known: %s, %s)", strings.Join(unknown, `", "`), KeyCredentials, KeyRegion)
	}
	return s, nil
}

// checkSlice refuses a name that is not a slice name (names.IsSlice)
// rather than trusting it: binky only ever sends those.
func checkSlice(what, s string) error {
	if !names.IsSlice(s) {
		return sdk.Errorf(sdk.CodeInvalid, "%s %q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", what, s)
	}
	return nil
}

// invalid is an invalid-request error about the admin URL raw, with every
// secret of raw, whole or in pieces, scrubbed out.
func invalid(raw, format string, args ...any) error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", sdk.ScrubAdmin(fmt.Sprintf(format, args...), raw))
}
