package kafkaadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// The config keys the adapter reads.
const (
	// KeyTopics (array of strings) are the topics provision creates, each
	// under the slice's prefix.
	KeyTopics = "topics"
	// KeyPartitions (integer, default 1) is each topic's partition count.
	KeyPartitions = "partitions"
	// KeyReplication (integer, default 1; -1 for the broker's default) is
	// each topic's replication factor.
	KeyReplication = "replication"
	// KeyACLs (bool) asks for a principal per slice; only false is
	// accepted today.
	KeyACLs = "acls"
)

// maxTopic is Kafka's longest topic name.
const maxTopic = 249

// cluster is a parsed admin_url (or resolve address).
type cluster struct {
	brokers []string // host:port
	user    string
	pass    string
	sasl    string // "", plain, scram-sha-256 or scram-sha-512
	tls     bool
}

// url is the cluster's URL, credentials included.
func (c *cluster) url() string {
	u := url.URL{Scheme: "kafka", Host: strings.Join(c.brokers, ",")}
	if c.user != "" {
		u.User = url.UserPassword(c.user, c.pass)
	}
	q := url.Values{}
	if c.sasl != "" && c.sasl != "plain" {
		q.Set("sasl", c.sasl)
	}
	if c.tls {
		q.Set("tls", "true")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// parseURL reads kafka://[user:password@]host:port[,host:port…][?sasl=…&tls=true]
// (redpanda:// is the same). Its errors never quote the URL: it may hold a
// password.
func parseURL(raw string) (*cluster, error) {
	if raw == "" {
		return nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like kafka://127.0.0.1:9092")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	if u.Scheme != "kafka" && u.Scheme != "redpanda" {
		return nil, invalid(raw, "admin_url must start with kafka:// (or redpanda://); got scheme %q", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || !strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://") {
		return nil, invalid(raw, "admin_url names no broker: use kafka://127.0.0.1:9092")
	}
	if strings.Contains(raw, "#") {
		return nil, invalid(raw, "admin_url has a '#' (the start of a URL fragment); percent-encode a '#' in the user or password as %%23")
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return nil, invalid(raw, "admin_url has a path; give only the brokers: kafka://host:port[,host:port]")
	}
	c := &cluster{}
	for _, b := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(b)
		if err != nil || host == "" || port == "" {
			return nil, invalid(raw, "admin_url's broker %d is not host:port", len(c.brokers)+1)
		}
		c.brokers = append(c.brokers, b)
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.sasl = "plain"
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, invalid(raw, "admin_url's query does not parse: %v", err)
	}
	for k, v := range q {
		switch k {
		case "sasl":
			m := strings.ToLower(v[0])
			if m != "plain" && m != "scram-sha-256" && m != "scram-sha-512" {
				return nil, invalid(raw, "admin_url's sasl must be plain, scram-sha-256 or scram-sha-512")
			}
			c.sasl = m
		case "tls":
			if v[0] != "true" && v[0] != "false" {
				return nil, invalid(raw, "admin_url's tls must be true or false")
			}
			c.tls = v[0] == "true"
		default:
			return nil, invalid(raw, "admin_url has query parameter %q; the kafka adapter reads only sasl and tls", k)
		}
	}
	if c.sasl != "" && c.user == "" {
		return nil, invalid(raw, "admin_url asks for SASL but names no user: write kafka://user:password@host:port")
	}
	return c, nil
}

// settings are a request's config, checked.
type settings struct {
	topics      []string // without the prefix, sorted
	partitions  int32
	replication int16
}

func parseConfig(cfg map[string]any) (settings, error) {
	s := settings{partitions: 1, replication: 1}
	var unknown []string
	for k, v := range cfg {
		switch k {
		case KeyTopics:
			list, ok := v.([]any)
			if !ok {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be an array of topic names; got %T", KeyTopics, v)
			}
			seen := map[string]bool{}
			for _, e := range list {
				name, ok := e.(string)
				if !ok || !validTopic(name) {
					return s, sdk.Errorf(sdk.CodeInvalid, "config %s: %v is not a topic name (1 to 185 characters of [a-zA-Z0-9._-], not . or ..)", KeyTopics, e)
				}
				if !seen[name] {
					seen[name] = true
					s.topics = append(s.topics, name)
				}
			}
			sort.Strings(s.topics)
		case KeyPartitions:
			n, ok := integer(v)
			if !ok || n < 1 || n > 100000 {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be a whole number from 1; got %v", KeyPartitions, v)
			}
			s.partitions = int32(n)
		case KeyReplication:
			n, ok := integer(v)
			if !ok || n == 0 || n < -1 || n > math.MaxInt16 {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be a whole number from 1, or -1 for the broker's default; got %v", KeyReplication, v)
			}
			s.replication = int16(n)
		case KeyACLs:
			b, ok := v.(bool)
			if !ok {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %v", KeyACLs, v)
			}
			if b {
				return s, sdk.Errorf(sdk.CodeInvalid, "config %s = true is not supported by the kafka adapter yet: slices share admin_url's credentials and are fenced by their topic prefix only; remove the key", KeyACLs)
			}
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return s, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the kafka adapter (known: %s, %s, %s, %s)", strings.Join(unknown, `", "`), KeyACLs, KeyPartitions, KeyReplication, KeyTopics)
	}
	return s, nil
}

// integer reads a whole number as JSON (float64) or TOML (int64) gives it.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// validTopic: a topic name the slice's prefix (at most 64 bytes) leaves
// room for, in Kafka's legal characters.
func validTopic(t string) bool {
	if t == "" || len(t) > maxTopic-64 || t == "." || t == ".." {
		return false
	}
	for _, c := range t {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
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
