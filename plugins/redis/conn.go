package redisadapter

import (
	"errors"
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
	db     int
	// acl is 0 until probed, then 1 (the server has ACLs) or -1 (it has
	// not). Guarded by Redis.mu.
	acl int
}

// parseAdminURL checks an admin_url: redis://, rediss://, valkey://,
// valkeys:// or unix://. Its errors never quote it: it may hold a password.
func parseAdminURL(raw string) (*url.URL, *goredis.Options, error) {
	if raw == "" {
		return nil, nil, sdk.Errorf(sdk.CodeInvalid, "no admin_url: set the service's admin_url to a URL like redis://127.0.0.1:6379/0")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password included
		}
		return nil, nil, sdk.Errorf(sdk.CodeInvalid, "admin_url is not a URL: %v", err)
	}
	norm := *u
	switch u.Scheme {
	case "redis", "rediss", "unix":
	case "valkey":
		norm.Scheme = "redis"
	case "valkeys":
		norm.Scheme = "rediss"
	default:
		return nil, nil, sdk.Errorf(sdk.CodeInvalid, "admin_url must start with redis://, rediss://, valkey:// or unix://; got scheme %q", u.Scheme)
	}
	if u.Opaque != "" {
		return nil, nil, sdk.Errorf(sdk.CodeInvalid, "admin_url must be redis://[user:password@]host:port/db")
	}
	opts, err := goredis.ParseURL(norm.String())
	if err != nil {
		return nil, nil, sdk.Errorf(sdk.CodeInvalid, "admin_url: %s", scrub(err.Error(), u))
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
// code its cause deserves and the admin password scrubbed out.
func fail(op string, admin *url.URL, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: scrub(op+": "+se.Message, admin)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: scrub(op+": "+err.Error(), admin) + hint(code)}
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

// scrub removes the admin URL's password from a message.
func scrub(msg string, admin *url.URL) string { return sdk.ScrubURL(msg, admin) }
