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
	// KeyTestDatabases (bool, default false): the slice's test-database
	// allowance (testdb.go). With owner_role the slice's role gets
	// CREATEDB; destroy drops the test databases.
	KeyTestDatabases = "test_databases"
)

// Clone strategies a config may name.
const (
	StrategyAuto     = "auto"
	StrategyWALLog   = "wal_log"
	StrategyFileCopy = "file_copy"
)

// config is a service's config table, decoded.
type config struct {
	ownerRole     bool
	strategy      string
	testDatabases bool
}

// parseConfig decodes a config table strictly: an unknown key or a value of
// the wrong type is an invalid request, named.
func parseConfig(m map[string]any) (config, error) {
	c := config{strategy: StrategyAuto}
	var unknown []string
	for k, v := range m {
		switch k {
		case KeyOwnerRole, KeyTestDatabases:
			b, ok := v.(bool)
			if !ok {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %s", k, describeValue(v))
			}
			if k == KeyOwnerRole {
				c.ownerRole = b
			} else {
				c.testDatabases = b
			}
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
		return c, sdk.Errorf(sdk.CodeInvalid, "unknown config key %s for the postgres adapter (known: %s, %s, %s)",
			strings.Join(quoteAll(unknown), ", "), KeyOwnerRole, KeyCloneStrategy, KeyTestDatabases)
	}
	return c, nil
}

// parseAdminURL checks that raw is a postgres:// or postgresql:// URL. Its
// errors never quote raw, which may hold a password, nor a piece of its
// password (net/url quotes pieces of what it could not parse).
func parseAdminURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like postgres://postgres@127.0.0.1:5432/postgres")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, invalid(raw, "admin_url must start with postgres:// or postgresql://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" || !strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://") {
		return nil, invalid(raw, "admin_url must be postgres://[user[:password]@]host[:port]/[database]")
	}
	// pgx knows the scheme only in lower case: "Postgres://h" it reads as
	// key=value settings, with another host (FuzzParseAdminURL).
	if !strings.HasPrefix(raw, u.Scheme+"://") {
		return nil, invalid(raw, "admin_url must start with postgres:// or postgresql:// in lower case")
	}
	if strings.Contains(raw, "#") {
		return nil, invalid(raw, "admin_url has a '#' (the start of a URL fragment, which no server reads); percent-encode a '#' in the user or password as %%23")
	}
	// One '@' at most before the path: Go reads the last as the end of the
	// user and password, pgx reads them its own way (FuzzParseAdminURL).
	authority := raw[len(u.Scheme)+3:]
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority = authority[:i]
	}
	if strings.Count(authority, "@") > 1 {
		return nil, invalid(raw, "admin_url has more than one '@' before the host; percent-encode an '@' in the user or password as %%40")
	}
	// pgx looks for the credentials' '@' past the host too: "?a=@" it
	// reads as a user named "?a=".
	if strings.Count(raw[len(u.Scheme)+3:], "@") != strings.Count(authority, "@") {
		return nil, invalid(raw, "admin_url has an '@' after the host; percent-encode it as %%40")
	}
	// Every query parameter is key=value: pgx reads "?@" on the admin URL
	// but refuses it on the slice's (FuzzParseAdminURL).
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, invalid(raw, "admin_url query parameter %q is not key=value (such as sslmode=disable)", kv)
		}
	}
	return u, nil
}

// sliceURL is the admin URL with the database replaced by db and, when
// user is set, the credentials replaced by user. Query parameters that
// would override either are dropped; the others are kept as written, so
// pgx reads them back as it read the admin URL's.
func sliceURL(admin *url.URL, db string, user *url.Userinfo) string {
	u := *admin
	u.Path = "/" + db
	u.RawPath = ""
	drop := []string{"dbname", "database"}
	if user != nil {
		u.User = user
		drop = append(drop, "user", "password", "passfile")
	}
	u.RawQuery = dropParams(u.RawQuery, drop)
	return u.String()
}

// dropParams removes the parameters named in drop from a raw query and
// keeps every other one byte for byte.
func dropParams(rawQuery string, drop []string) string {
	var keep []string
	for _, kv := range strings.Split(rawQuery, "&") {
		if kv == "" {
			continue
		}
		k, _, _ := strings.Cut(kv, "=")
		qk, _ := url.QueryUnescape(k)
		pk, _ := url.PathUnescape(k)
		if slices.Contains(drop, k) || slices.Contains(drop, qk) || slices.Contains(drop, pk) {
			continue
		}
		keep = append(keep, kv)
	}
	return strings.Join(keep, "&")
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

// invalid is an invalid-request error about the admin URL raw, with every
// password of raw, whole or in pieces, scrubbed out.
func invalid(raw, format string, args ...any) error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", sdk.ScrubAdmin(fmt.Sprintf(format, args...), raw))
}
