package postgresadapter

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Config keys a service may set in its config table.
const (
	// KeyOwnerRole (bool, default false): give each slice its own LOGIN
	// role that owns its database, and resolve to that role.
	KeyOwnerRole = "owner_role"
	// KeyCloneStrategy (string, default "auto"): "auto", "wal_log" or
	// "file_copy", the STRATEGY of CREATE DATABASE … TEMPLATE.
	KeyCloneStrategy = "clone_strategy"
)

// Clone strategies a config may name.
const (
	StrategyAuto     = "auto"
	StrategyWALLog   = "wal_log"
	StrategyFileCopy = "file_copy"
)

// config is a service's config table, decoded.
type config struct {
	ownerRole bool
	strategy  string
}

// parseConfig decodes a config table strictly: an unknown key or a value of
// the wrong type is an invalid request, named.
func parseConfig(m map[string]any) (config, error) {
	c := config{strategy: StrategyAuto}
	var unknown []string
	for k, v := range m {
		switch k {
		case KeyOwnerRole:
			b, ok := v.(bool)
			if !ok {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %s", k, describeValue(v))
			}
			c.ownerRole = b
		case KeyCloneStrategy:
			s, ok := v.(string)
			if !ok || !slices.Contains([]string{StrategyAuto, StrategyWALLog, StrategyFileCopy}, s) {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be %q, %q or %q; got %s",
					k, StrategyAuto, StrategyWALLog, StrategyFileCopy, describeValue(v))
			}
			c.strategy = s
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, sdk.Errorf(sdk.CodeInvalid, "unknown config key %s for the postgres adapter (known: %s, %s)",
			strings.Join(quoteAll(unknown), ", "), KeyOwnerRole, KeyCloneStrategy)
	}
	return c, nil
}

// parseAdminURL checks that raw is a postgres:// or postgresql:// URL. Its
// errors never quote raw, which may hold a password.
func parseAdminURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, sdk.Errorf(sdk.CodeInvalid, "no admin_url: set the service's admin_url to a URL like postgres://postgres@127.0.0.1:5432/postgres")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url is not a URL: %v", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url must start with postgres:// or postgresql://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url must be postgres://[user[:password]@]host[:port]/[database]")
	}
	return u, nil
}

// sliceURL is the admin URL with the database replaced by db and, when
// user is set, the credentials replaced by user. Query parameters that
// would override either are dropped.
func sliceURL(admin *url.URL, db string, user *url.Userinfo) string {
	u := *admin
	u.Path = "/" + db
	u.RawPath = ""
	q := u.Query()
	q.Del("dbname")
	q.Del("database")
	if user != nil {
		u.User = user
		q.Del("user")
		q.Del("password")
		q.Del("passfile")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// describeValue names a config value for an error message.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", v)
	default:
		return fmt.Sprintf("%v (%T)", v, v)
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
