package rabbitmq

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

// Config keys.
const (
	KeyUser     = "user"      // "per-slice", or a user name; default: the admin URL's user
	KeyAMQPPort = "amqp_port" // the port resolve puts in the address; default 5672
	KeyAMQPHost = "amqp_host" // the host resolve puts in the address; default the admin URL's
	KeyAMQPS    = "amqps"     // true: the address is amqps:// (default port 5671)
)

// PerSlice is the config user value that gives each slice its own user.
const PerSlice = "per-slice"

// config is a service's config table, checked.
type config struct {
	user     string // "" (the admin user), PerSlice, or a name
	amqpPort int
	amqpHost string
	amqps    bool
}

var knownKeys = []string{KeyAMQPHost, KeyAMQPPort, KeyAMQPS, KeyUser}

// parseConfig checks the config table. Its errors have code invalid.
func parseConfig(m map[string]any) (*config, error) {
	c := &config{}
	var unknown []string
	for k, v := range m {
		switch k {
		case KeyUser:
			s, ok := v.(string)
			if !ok || s == "" || strings.ContainsAny(s, "\x00\r\n") || len(s) > 255 {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be %q or a RabbitMQ user name; got %v (%T)", KeyUser, PerSlice, printable(v), v)
			}
			c.user = s
		case KeyAMQPPort:
			p, ok := toInt(v)
			if !ok || p < 1 || p > 65535 {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be a port number (1-65535); got %v (%T)", KeyAMQPPort, printable(v), v)
			}
			c.amqpPort = p
		case KeyAMQPHost:
			s, ok := v.(string)
			if !ok || !httpx.ValidHost(s) {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be a host name or IP address; got %v (%T)", KeyAMQPHost, printable(v), v)
			}
			c.amqpHost = s
		case KeyAMQPS:
			b, ok := v.(bool)
			if !ok {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %v (%T)", KeyAMQPS, printable(v), v)
			}
			c.amqps = b
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the rabbitmq adapter (known: %s)", strings.Join(unknown, `", "`), strings.Join(knownKeys, ", "))
	}
	return c, nil
}

// printable keeps a config value in an error short.
func printable(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// toInt accepts the integer forms TOML and JSON decode to.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), n >= math.MinInt32 && n <= math.MaxInt32
	case float64:
		return int(n), n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil && i >= math.MinInt32 && i <= math.MaxInt32
	}
	return 0, false
}

// amqpURL is the address of a vhost for user:password.
func amqpURL(adminHost string, c *config, user, password, vhost string) string {
	host := c.amqpHost
	if host == "" {
		host = adminHost
	}
	port := c.amqpPort
	scheme := "amqp"
	if c.amqps {
		scheme = "amqps"
		if port == 0 {
			port = 5671
		}
	}
	if port == 0 {
		port = 5672
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/" + vhost, RawPath: "/" + url.PathEscape(vhost)}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	return u.String()
}

// amqpAddr is an AMQP URI read back (the form amqpURL writes, per the
// RabbitMQ URI spec: the vhost is the one path segment, percent-decoded).
type amqpAddr struct {
	scheme, host, port, user, password, vhost string
}

// parseAMQP reads an amqp:// or amqps:// URI. Its errors never quote it.
func parseAMQP(raw string) (*amqpAddr, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the address is not a URL")
	}
	if u.Scheme != "amqp" && u.Scheme != "amqps" {
		return nil, fmt.Errorf("the address is not amqp:// or amqps://")
	}
	if u.Host == "" || u.User == nil {
		return nil, fmt.Errorf("the address has no host or user")
	}
	seg := strings.TrimPrefix(u.EscapedPath(), "/")
	if strings.Contains(seg, "/") {
		return nil, fmt.Errorf("the address's vhost holds an unescaped '/'")
	}
	vhost, err := url.PathUnescape(seg)
	if err != nil {
		return nil, fmt.Errorf("the address's vhost is not percent-encoded properly")
	}
	pw, _ := u.User.Password()
	return &amqpAddr{scheme: u.Scheme, host: u.Hostname(), port: u.Port(), user: u.User.Username(), password: pw, vhost: vhost}, nil
}
