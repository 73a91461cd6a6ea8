package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-clickhouse.
const Name = "clickhouse"

// KeyEngine is the one config key: the database engine CREATE DATABASE
// names (Ordinary, Atomic, Lazy(60)…). Absent: the server's default.
const KeyEngine = "engine"

const example = "http://default:@127.0.0.1:8123"

var hints = httpx.Hints{
	sdk.CodeUnreachable: "is ClickHouse running, and is admin_url its HTTP interface (port 8123 by default), like " + example + "?",
	sdk.CodeAuth:        "check admin_url's user and password; the user needs to create and drop databases (not readonly)",
}

// ClickHouse is the adapter. It holds one HTTP client for every call.
type ClickHouse struct {
	http *httpx.Client
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *ClickHouse { return &ClickHouse{http: httpx.New()} }

// Describe says who the adapter is: clickhouse, unable to clone, claiming
// its slices.
func (*ClickHouse) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Clone: false, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	ep     *httpx.Endpoint
	engine string
	db     string
}

// reEngine is what config engine may hold: an engine name with optional
// numeric or quoted-free arguments, never a second statement.
var reEngine = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\([0-9, ]*\))?$`)

func parseConfig(m map[string]any) (string, error) {
	var engine string
	var unknown []string
	for k, v := range m {
		if k != KeyEngine {
			unknown = append(unknown, k)
			continue
		}
		s, ok := v.(string)
		if !ok || !reEngine.MatchString(s) || len(s) > 64 {
			got := fmt.Sprint(v)
			if len(got) > 40 {
				got = got[:40] + "…"
			}
			return "", sdk.Errorf(sdk.CodeInvalid, "config %s must be a database engine like \"Atomic\" or \"Lazy(60)\"; got %q (%T)", KeyEngine, got, v)
		}
		engine = s
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the clickhouse adapter (known: %s)", strings.Join(unknown, `", "`), KeyEngine)
	}
	return engine, nil
}

func target(t *sdk.Target) (*slice, error) {
	if !names.IsSlice(t.Slice) {
		return nil, sdk.Errorf(sdk.CodeInvalid, "%q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", t.Slice)
	}
	engine, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	ep, err := httpx.ParseAdminURL(t.AdminURL, example)
	if err != nil {
		return nil, err
	}
	return &slice{ep: ep, engine: engine, db: names.MySQL(t.Slice)}, nil
}

// Provision creates the database, reporting whether it existed. It
// records the caller's owner claim before it creates the database, so the
// database never exists unclaimed; an existing database claimed by
// another owner is refused with code conflict, and one claimed by nobody
// is adopted.
func (c *ClickHouse) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision clickhouse slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	existed, err := c.exists(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if existed {
		claim, err := c.checkClaim(ctx, s, &req.Target)
		if err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
		if claim == "" {
			if err := c.writeClaim(ctx, s, &req.Target); err != nil {
				return nil, httpx.Fail(op, req.AdminURL, err, hints)
			}
		}
	} else {
		if err := c.writeClaim(ctx, s, &req.Target); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, err, hints)
		}
		stmt := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(s.db)
		if s.engine != "" {
			stmt += " ENGINE = " + s.engine
		}
		if _, err := c.exec(ctx, s.ep, stmt); err != nil {
			return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("create database %s: %w", s.db, err), hints)
		}
	}
	return sdk.Provisioned(existed), nil
}

// Resolve answers the admin URL with database=<name>. It fails with code
// conflict when the database is gone or another owner claimed it.
func (c *ClickHouse) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve clickhouse slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	ok, err := c.exists(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if !ok {
		return nil, httpx.Fail(op, req.AdminURL, sdk.Errorf(sdk.CodeConflict, "database %s does not exist; provision the slice first (binky up does)", s.db), hints)
	}
	if _, err := c.checkClaim(ctx, s, &req.Target); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	return resolved(sliceURL(req.AdminURL, s.db), s.db), nil
}

// resolved is Resolve's answer: addr and the values database, user and
// password (secret) — the URL's user= and password= parameters where its
// userinfo names none, as the HTTP interface reads them — and host and
// port of the HTTP interface (not the native protocol's port).
func resolved(addr, db string) *sdk.ResolveResponse {
	res := httpx.Resolved(addr, map[string]string{"database": db})
	if u, err := url.Parse(addr); err == nil && u.User == nil {
		q := u.Query()
		if q.Has("user") {
			res.SetValue(sdk.ValueUser, q.Get("user"))
		}
		if q.Has("password") {
			res.SetSecret(sdk.ValuePassword, q.Get("password"))
		}
	}
	return res
}

// sliceURL is the admin URL raw (which parsed) with its query's database
// set to db; the rest of the query, the credentials and the path are
// kept.
func sliceURL(raw, db string) string {
	u, _ := url.Parse(raw)
	q := u.Query()
	q.Set("database", db)
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Clone is not offered: copying a ClickHouse database is INSERT … SELECT
// per table, O(rows).
func (*ClickHouse) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone clickhouse slice %q from %q: the clickhouse adapter does not clone (a copy is INSERT … SELECT per table, O(rows)); build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy drops the database, then its owner claim. A database another
// owner claimed is refused with code conflict and left untouched; a slice
// already gone is fine (a claim another owner left for a database that is
// gone is left alone: the next provision of the name replaces it).
func (c *ClickHouse) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy clickhouse slice %q", req.Slice)
	s, err := target(&req.Target)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	ok, err := c.exists(ctx, s)
	if err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, err := c.checkClaim(ctx, s, &req.Target); err != nil {
		if !ok && sdk.CodeOf(err) == sdk.CodeConflict {
			return &sdk.DestroyResponse{}, nil
		}
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	if _, err := c.exec(ctx, s.ep, "DROP DATABASE IF EXISTS "+quoteIdent(s.db)); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, fmt.Errorf("drop database %s: %w", s.db, err), hints)
	}
	if err := c.dropClaim(ctx, s); err != nil {
		return nil, httpx.Fail(op, req.AdminURL, err, hints)
	}
	return &sdk.DestroyResponse{}, nil
}

// exists looks the database up in system.databases (18.16 parses neither
// EXISTS DATABASE nor SHOW DATABASES LIKE).
func (c *ClickHouse) exists(ctx context.Context, s *slice) (bool, error) {
	out, err := c.exec(ctx, s.ep, "SELECT count() FROM system.databases WHERE name = "+quoteString(s.db))
	if err != nil {
		return false, fmt.Errorf("look up database %s: %w", s.db, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return false, fmt.Errorf("look up database %s: the server answered %q, not a count", s.db, httpx.OneLine(out))
	}
	return n > 0, nil
}

// exec POSTs one statement to the HTTP interface with the admin URL's
// query (settings, and user/password when given there) and returns the
// reply body.
func (c *ClickHouse) exec(ctx context.Context, ep *httpx.Endpoint, stmt string) ([]byte, error) {
	q := url.Values{}
	for k, v := range ep.Query {
		if k != "database" && k != "query" {
			q[k] = v
		}
	}
	base := *ep.Base
	if base.Path == "" {
		base.Path = "/"
	}
	u := base.String()
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := c.http.Call(ctx, ep, httpx.Request{Method: http.MethodPost, URL: u, Body: []byte(stmt), ContentType: "text/plain; charset=utf-8"}, nil)
	if err != nil {
		var st *httpx.StatusError
		if errors.As(err, &st) {
			return nil, serverError(st)
		}
		return nil, err
	}
	return resp.Body, nil
}

// serverError classifies a ClickHouse exception ("Code: 193, e.displayText()
// = DB::Exception: Wrong password…") by its code, which is stable across
// versions, rather than by the HTTP status, which is not.
func serverError(st *httpx.StatusError) error {
	code := -1
	if m := reCode.FindStringSubmatch(st.Body); m != nil {
		code, _ = strconv.Atoi(m[1])
	}
	msg := st.Body
	if i := strings.Index(msg, "DB::Exception: "); i >= 0 {
		msg = msg[i+len("DB::Exception: "):]
		if j := strings.Index(msg, ", e.what()"); j >= 0 {
			msg = msg[:j]
		}
	}
	e := &chError{code: code, text: fmt.Sprintf("HTTP %d: %s", st.Status, msg)}
	switch code {
	case 192, 193, 194, 195, 516, 497, 164, 291: // unknown user, wrong password, required password, IP not allowed, auth failed, access denied, readonly, database access denied
		return httpx.WithCode(sdk.CodeAuth, e)
	case 62, 36, 60, 81, 115, 117, 336: // syntax error, bad arguments, unknown table, unknown database, unknown setting, incorrect data, unknown database engine
		return httpx.WithCode(sdk.CodeInvalid, e)
	case 82: // database already exists
		return httpx.WithCode(sdk.CodeConflict, e)
	}
	return httpx.WithCode(httpx.Classify(st), e)
}

// chError is a ClickHouse exception: its code (-1 when the reply named
// none) and its text for people.
type chError struct {
	code int
	text string
}

func (e *chError) Error() string { return e.text }

var reCode = regexp.MustCompile(`^Code: ([0-9]+)`)

// quoteIdent quotes a ClickHouse identifier with backticks.
func quoteIdent(s string) string {
	return "`" + escape(s, '`') + "`"
}

// quoteString quotes a ClickHouse string literal.
func quoteString(s string) string {
	return "'" + escape(s, '\'') + "'"
}

func escape(s string, q byte) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

var _ sdk.Adapter = (*ClickHouse)(nil)
