package mysqladapter

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/binkyhq/binky/sdk"
)

// Config keys a service may set in its config table.
const (
	// KeyCharset (string): the CHARACTER SET of a provisioned database.
	// Empty: the server's default.
	KeyCharset = "charset"
	// KeyCollation (string): the COLLATE of a provisioned database. Empty:
	// the charset's default.
	KeyCollation = "collation"
	// KeyScheme (string): the scheme of the resolved address, for a
	// framework that reads it as the driver's name (scheme = "mysql2" for
	// Rails, "mysql+pymysql" for SQLAlchemy). Empty: the admin URL's
	// (mysql:// for a DSN admin).
	KeyScheme = "scheme"
	// KeyOwnerUser (bool, default false): give each slice its own user,
	// granted its database alone, and resolve to it (user.go).
	KeyOwnerUser = "owner_user"
	// KeyTestDatabases (bool, default false): the slice's test-database
	// allowance (testdb.go): the slice user may create and drop databases
	// of its test-database names, and destroy drops them.
	KeyTestDatabases = "test_databases"
)

// config is a service's config table, decoded.
type config struct {
	charset       string
	collation     string
	scheme        string
	ownerUser     bool
	testDatabases bool
}

// parseConfig decodes a config table strictly: an unknown key or a value
// of the wrong shape is an invalid request, named.
func parseConfig(m map[string]any) (config, error) {
	var c config
	var unknown []string
	for k, v := range m {
		switch k {
		case KeyCharset, KeyCollation:
			s, ok := v.(string)
			if !ok || !isWord(s) {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be a name of letters, digits and '_' (utf8mb4); got %v", k, describe(v))
			}
			if k == KeyCharset {
				c.charset = s
			} else {
				c.collation = s
			}
		case KeyScheme:
			s, ok := v.(string)
			if !ok || !isScheme(s) {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be a URL scheme: a letter, then letters, digits, '+', '-' or '.', at most 32 (for example \"mysql2\"); got %v", k, describe(v))
			}
			c.scheme = strings.ToLower(s)
		case KeyOwnerUser, KeyTestDatabases:
			b, ok := v.(bool)
			if !ok {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %v", k, describe(v))
			}
			if k == KeyOwnerUser {
				c.ownerUser = b
			} else {
				c.testDatabases = b
			}
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the mysql adapter (known: %s, %s, %s, %s, %s)",
			strings.Join(unknown, `", "`), KeyCharset, KeyCollation, KeyScheme, KeyOwnerUser, KeyTestDatabases)
	}
	return c, nil
}

func isWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isScheme reports whether s is a URL scheme (RFC 3986: ALPHA *( ALPHA /
// DIGIT / "+" / "-" / "." )) of at most 32 bytes.
func isScheme(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if i == 0 && !letter || !(letter || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// admin is a parsed admin_url.
type admin struct {
	// cfg is the driver's configuration of the admin connection (no
	// database selected).
	cfg *mysql.Config
	// url is the admin URL when it was given as one; nil for a DSN.
	url *url.URL
}

// parseAdmin reads an admin_url: mysql:// or mariadb:// URL
// (mysql://user:password@host:port/?param=value, or ?socket=/path with no
// host for a Unix socket), or a go-sql-driver DSN. Its errors never quote
// the input, which may hold a password, nor a piece of the password
// (net/url and the driver quote pieces of what they could not parse).
//
// What it accepts, sliceURL turns into a mysql:// URL that parseAdmin
// reads back to the same server and credentials.
func parseAdmin(raw string) (*admin, error) {
	if raw == "" {
		return nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like mysql://root@127.0.0.1:3306/")
	}
	if !strings.Contains(raw, "://") {
		cfg, err := mysql.ParseDSN(raw)
		if err != nil {
			return nil, invalid(raw, "admin_url is neither a mysql:// URL nor a go-sql-driver DSN: %v", err)
		}
		cfg.DBName = ""
		if cfg.User == "" && cfg.Passwd != "" {
			return nil, invalid(raw, errNoUser)
		}
		if err := checkAddr(cfg.Net, cfg.Addr); err != nil {
			return nil, invalid(raw, "admin_url: %v", err)
		}
		return &admin{cfg: cfg}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	switch u.Scheme {
	case "mysql", "mariadb", "percona":
	default:
		return nil, invalid(raw, "admin_url must start with mysql:// or mariadb://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" {
		return nil, invalid(raw, "admin_url must be mysql://[user[:password]@]host[:port]/")
	}
	if strings.Contains(raw, "#") {
		return nil, invalid(raw, "admin_url has a '#' (the start of a URL fragment, which no server reads); percent-encode a '#' in the user or password as %%23")
	}
	q := u.Query()
	socket := q.Get("socket")
	q.Del("socket")
	cfg, err := mysql.ParseDSN("/?" + q.Encode())
	if err != nil {
		return nil, invalid(raw, "admin_url has a parameter the mysql driver refuses: %v", err)
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		if cfg.User == "" && cfg.Passwd != "" {
			return nil, invalid(raw, errNoUser)
		}
	}
	switch {
	case socket != "":
		if u.Host != "" {
			return nil, invalid(raw, "admin_url names both a host and ?socket=; use mysql://user@/?socket=/path for a Unix socket")
		}
		cfg.Net, cfg.Addr = "unix", socket
	case u.Hostname() == "":
		return nil, invalid(raw, "admin_url has no host: use mysql://user@127.0.0.1:3306/")
	default:
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(u.Hostname(), port)
	}
	return &admin{cfg: cfg, url: u}, nil
}

// errNoUser refuses a password without a user, which the slice's DSN
// could not carry.
const errNoUser = "admin_url has a password but no user; name the user: mysql://root:password@host:3306/"

// checkAddr accepts a DSN's network and address when a mysql:// URL can
// carry them: TCP to a host name, an IPv4 address or a bracketed IPv6
// address, and a port of 1 to 65535; or a Unix socket path.
func checkAddr(network, addr string) error {
	switch network {
	case "unix":
		if addr == "" {
			return errors.New("the DSN names no socket path")
		}
		return nil
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("the DSN's network %q is not tcp or unix", network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the DSN's address is not host:port: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return fmt.Errorf("the DSN's port %q is not a number from 1 to 65535", port)
	}
	if host == "" {
		return errors.New("the DSN's address has no host")
	}
	if strings.HasPrefix(addr, "[") {
		// net.SplitHostPort took the brackets off: an IPv6 address, no zone
		// (a URL would need it written %25).
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return fmt.Errorf("the DSN's host [%s] is not an IPv6 address", host)
		}
		return nil
	}
	for _, c := range host {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("the DSN's host %q is not a host name or IPv4 address (write an IPv6 address in brackets)", host)
		}
	}
	return nil
}

// sliceURL is the slice's address: the admin URL with the database
// replaced; for a DSN admin, a mysql:// URL built from it.
func (a *admin) sliceURL(db string) string {
	var u url.URL
	if a.url != nil {
		u = *a.url
		u.RawPath = ""
	} else {
		u = url.URL{Scheme: "mysql"}
		if a.cfg.User != "" {
			u.User = url.User(a.cfg.User)
			if a.cfg.Passwd != "" {
				u.User = url.UserPassword(a.cfg.User, a.cfg.Passwd)
			}
		}
		if a.cfg.Net == "unix" {
			u.RawQuery = url.Values{"socket": {a.cfg.Addr}}.Encode()
		} else {
			u.Host = a.cfg.Addr
		}
	}
	u.Path = "/" + db
	return u.String()
}

// sliceDSN is the slice's go-sql-driver DSN.
func (a *admin) sliceDSN(db string) string {
	c := a.cfg.Clone()
	c.DBName = db
	return c.FormatDSN()
}

// invalid is an invalid-request error about the admin URL raw, with
// every password of raw, whole or in pieces, scrubbed out.
func invalid(raw, format string, args ...any) error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", sdk.ScrubAdmin(fmt.Sprintf(format, args...), raw))
}
