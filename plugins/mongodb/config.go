package mongoadapter

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// admin is a parsed admin_url.
type admin struct {
	u  *url.URL
	cs *connstring.ConnString
}

// parseAdminURL checks an admin_url: mongodb:// or mongodb+srv://. Its
// errors never quote it: it may hold a password.
func parseAdminURL(raw string) (*admin, error) {
	if raw == "" {
		return nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like mongodb://127.0.0.1:27017")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	if u.Scheme != "mongodb" && u.Scheme != "mongodb+srv" {
		return nil, invalid(raw, "admin_url must start with mongodb:// or mongodb+srv://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || strings.Contains(raw, "#") {
		return nil, invalid(raw, "admin_url must be mongodb://[user:password@]host:port[/db][?options] (percent-encode a '#' as %%23)")
	}
	cs, err := connstring.ParseAndValidate(raw)
	if err != nil {
		return nil, invalid(raw, "admin_url: %v", err)
	}
	return &admin{u: u, cs: cs}, nil
}

// sliceURL is the admin URL naming database db. When the admin URL
// authenticates against its own path's database (no authSource), that
// database is kept as authSource so the credentials still work.
func (a *admin) sliceURL(db string) string {
	u := *a.u
	q := u.Query()
	if u.User != nil && q.Get("authSource") == "" {
		src := strings.TrimPrefix(u.Path, "/")
		if src == "" {
			src = "admin"
		}
		q.Set("authSource", src)
	}
	u.Path = "/" + db
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return u.String()
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
// password of raw, whole or in pieces, scrubbed out.
func invalid(raw, format string, args ...any) error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", sdk.ScrubAdmin(fmt.Sprintf(format, args...), raw))
}
