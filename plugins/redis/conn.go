package redisadapter

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// server is one admin URL's client and what the adapter learnt about the
// server behind it. It lives as long as the process.
type server struct {
	url    *url.URL
	client *goredis.Client
	// claims is the client on logical database 0, where owner claims
	// live: client itself when the admin URL names database 0.
	claims *goredis.Client
	db     int
	// acl is 0 until probed, then 1 (the server has ACLs) or -1 (it has
	// not). Guarded by Redis.mu.
	acl int
}

// parseAdminURL checks an admin_url: redis://, rediss://, valkey://,
// valkeys:// or unix://. Its errors never quote it: it may hold a password.
func parseAdminURL(raw string) (*url.URL, *goredis.Options, error) {
	if raw == "" {
		return nil, nil, invalid(raw, "no admin_url: set the service's admin_url to a URL like redis://127.0.0.1:6379/0")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, nil, invalid(raw, "admin_url is not a URL: %v%s", err, sdk.URLParseHint)
	}
	norm := *u
	switch u.Scheme {
	case "redis", "rediss", "unix":
	case "valkey":
		norm.Scheme = "redis"
	case "valkeys":
		norm.Scheme = "rediss"
	default:
		return nil, nil, invalid(raw, "admin_url must start with redis://, rediss://, valkey:// or unix://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" || !strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://") {
		return nil, nil, invalid(raw, "admin_url must be redis://[user:password@]host:port/db")
	}
	if u.Scheme == "unix" && u.Path == "" || u.Scheme != "unix" && u.Host == "" {
		return nil, nil, invalid(raw, "admin_url names no server: use redis://127.0.0.1:6379/0, or unix:///path/to/redis.sock")
	}
	if strings.Contains(raw, "#") {
		return nil, nil, invalid(raw, "admin_url has a '#' (the start of a URL fragment, which no server reads); percent-encode a '#' in the user or password as %%23")
	}
	opts, err := goredis.ParseURL(norm.String())
	if err != nil {
		return nil, nil, invalid(raw, "admin_url: %v", err)
	}
	return u, opts, nil
}

// server returns the client of an admin URL, creating it on first use. The
// client connects lazily.
func (r *Redis) server(raw string) (*server, error) {
	u, opts, err := parseAdminURL(raw)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.servers[raw]; ok {
		return s, nil
	}
	opts.DisableIdentity = true
	opts.PoolSize = 4
	opts.MaxRetries = 1
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 5 * time.Second
	}
	s := &server{url: u, client: goredis.NewClient(opts), db: opts.DB}
	s.claims = s.client
	if opts.DB != 0 {
		zero := *opts
		zero.DB = 0
		zero.PoolSize = 2
		s.claims = goredis.NewClient(&zero)
	}
	r.servers[raw] = s
	return s, nil
}

// slicedURL is the admin URL with the credentials replaced by user.
func slicedURL(admin *url.URL, user *url.Userinfo) string {
	u := *admin
	u.User = user
	if u.RawQuery != "" {
		q := u.Query()
		q.Del("username")
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every password of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: sdk.ScrubAdmin(op+": "+se.Message, raw)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: sdk.ScrubAdmin(op+": "+err.Error()+hint(code), raw)}
}

// classify picks the reply code of a client error.
func classify(err error) sdk.Code {
	var re goredis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"NOAUTH", "WRONGPASS", "NOPERM", "ERR invalid password", "ERR AUTH"} {
			if strings.HasPrefix(msg, p) {
				return sdk.CodeAuth
			}
		}
		if strings.HasPrefix(msg, "LOADING") {
			return sdk.CodeUnreachable
		}
		return sdk.CodeInternal
	}
	if sdk.IsNetworkError(err) {
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the Redis/Valkey server running and is admin_url's host and port right?)"
	case sdk.CodeAuth:
		return " (check admin_url's user and password; the admin user needs +@admin for ACL SETUSER, or set config acl = false)"
	}
	return ""
}

// invalid is an invalid-request error about the admin URL raw, with every
// password of raw, whole or in pieces, scrubbed out.
func invalid(raw, format string, args ...any) error {
	return sdk.Errorf(sdk.CodeInvalid, "%s", sdk.ScrubAdmin(fmt.Sprintf(format, args...), raw))
}
