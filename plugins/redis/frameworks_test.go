package redisadapter

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// provisionCfg provisions a slice with cfg and destroys it with the same
// cfg when the test ends (a db-mode slice's database is released then).
func provisionCfg(t *testing.T, a *Redis, admin, slice string, cfg map[string]any) *sdk.ProvisionResponse {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, cfg)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
	res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
	return res
}

// TestResolveValues: prefix, namespace, db and the connection parts of
// the address (the password listed secret), with ACL users and without.
func TestResolveValues(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		a := New()
		for _, cfg := range []map[string]any{nil, {KeyACL: false}} {
			s := testSlice(t, "vals")
			provisionCfg(t, a, admin, s, cfg)
			r := resolveT(t, a, admin, s, cfg)
			v := r.Values
			au, _ := url.Parse(admin)
			if v["prefix"] != s+":" || v["namespace"] != s || v["db"] != strings.TrimPrefix(au.Path, "/") {
				t.Errorf("cfg %v: prefix %q namespace %q db %q; want %q %q %q", cfg, v["prefix"], v["namespace"], v["db"], s+":", s, strings.TrimPrefix(au.Path, "/"))
			}
			if v["host"] != au.Hostname() || v["port"] != au.Port() {
				t.Errorf("cfg %v: host %q port %q; want %q %q", cfg, v["host"], v["port"], au.Hostname(), au.Port())
			}
			if !slices.Contains(r.Secret, "password") {
				t.Errorf("cfg %v: secret %v; want password listed", cfg, r.Secret)
			}
			// A URL built from the parts reaches the same place.
			built := (&url.URL{Scheme: "redis", User: url.UserPassword(v["user"], v["password"]), Host: net.JoinHostPort(v["host"], v["port"]), Path: "/" + v["db"]}).String()
			if v["user"] == "" {
				built = (&url.URL{Scheme: "redis", Host: net.JoinHostPort(v["host"], v["port"]), Path: "/" + v["db"]}).String()
			}
			c := client(t, built)
			if err := c.Set(t.Context(), v["namespace"]+":k", "v", 0).Err(); err != nil {
				t.Errorf("cfg %v: SET with the built URL: %v", cfg, err)
			}
		}
	})
}

// TestBullMQStyleUse: what BullMQ does with prefix = ${cache.namespace}:
// keys <namespace>:<queue>:<id>, lists <namespace>:<queue>:wait, a worker
// connection named with CLIENT SETNAME and found again with CLIENT LIST
// (getWorkers), all on the slice's own credentials; the other slice's
// keys stay out of reach.
func TestBullMQStyleUse(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		cfg := map[string]any{KeyClientList: true}
		one, two := testSlice(t, "bull"), testSlice(t, "other")
		provisionCfg(t, a, admin, one, cfg)
		provisionCfg(t, a, admin, two, nil)
		r1, r2 := resolveT(t, a, admin, one, cfg), resolveT(t, a, admin, two, nil)
		ns := r1.Values["namespace"]
		queue := "mail"
		base := ns + ":" + queue

		c := client(t, r1.Address)
		if err := c.HSet(ctx, base+":1", "name", "welcome", "data", `{"to":"a@b"}`).Err(); err != nil {
			t.Fatalf("HSET job: %v", err)
		}
		if err := c.LPush(ctx, base+":wait", "1").Err(); err != nil {
			t.Fatalf("LPUSH wait: %v", err)
		}
		if err := c.Incr(ctx, base+":id").Err(); err != nil {
			t.Fatalf("INCR id: %v", err)
		}
		if err := c.LMove(ctx, base+":wait", base+":active", "RIGHT", "LEFT").Err(); err != nil {
			t.Fatalf("LMOVE wait active: %v", err)
		}
		if err := c.Info(ctx).Err(); err != nil {
			t.Errorf("INFO: %v", err)
		}

		// The worker's connection: BullMQ names it <prefix>:<base64 queue>.
		name := ns + ":" + base64.StdEncoding.EncodeToString([]byte(queue))
		worker := connNamed(t, r1.Address, name)
		if got, err := worker.ClientGetName(ctx).Result(); err != nil || got != name {
			t.Errorf("CLIENT GETNAME = %q, %v; want %q", got, err, name)
		}
		if err := worker.ClientID(ctx).Err(); err != nil {
			t.Errorf("CLIENT ID: %v", err)
		}
		list, err := c.ClientList(ctx).Result()
		if err != nil {
			t.Fatalf("CLIENT LIST with client_list = true: %v", err)
		}
		if !strings.Contains(list, "name="+name+" ") {
			t.Errorf("CLIENT LIST does not show the worker %q:\n%s", name, list)
		}

		// Without client_list: names work, CLIENT LIST does not.
		c2 := client(t, r2.Address)
		other := connNamed(t, r2.Address, r2.Values["namespace"]+":x")
		if err := other.ClientGetName(ctx).Err(); err != nil {
			t.Errorf("CLIENT GETNAME without client_list: %v", err)
		}
		if err := c2.ClientList(ctx).Err(); !isNoPerm(err) {
			t.Errorf("CLIENT LIST without client_list: %v; want NOPERM", err)
		}
		// The slices stay apart.
		for what, err := range map[string]error{
			"read the BullMQ slice's job":   c2.HGetAll(ctx, base+":1").Err(),
			"pop the BullMQ slice's queue":  c2.LPop(ctx, base+":active").Err(),
			"write outside its namespace":   c.Set(ctx, "bull:"+queue+":1", "x", 0).Err(),
			"CLIENT KILL another":           c.ClientKillByFilter(ctx, "SKIPME", "yes", "USER", two).Err(),
			"CONFIG GET with client_list":   c.ConfigGet(ctx, "maxmemory-policy").Err(),
			"FLUSHDB with client_list":      c.FlushDB(ctx).Err(),
			"KEYS with client_list":         c.Keys(ctx, "*").Err(),
			"read a claim with client_list": c.Get(ctx, claimKeyPrefix+two).Err(),
		} {
			if !isNoPerm(err) {
				t.Errorf("%s: %v; want NOPERM", what, err)
			}
		}
		if n, err := client(t, admin).Exists(ctx, base+":1", base+":active", base+":id").Result(); err != nil || n != 3 {
			t.Errorf("the BullMQ keys after the other slice's attempts: %d, %v; want 3", n, err)
		}
	})
}

// connNamed is a one-connection client whose connection is named name
// (CLIENT SETNAME on connect, as BullMQ's worker does).
func connNamed(t *testing.T, addr, name string) *goredis.Client {
	t.Helper()
	opts, err := goredis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	opts.DisableIdentity = true
	opts.PoolSize = 1
	opts.OnConnect = func(ctx context.Context, cn *goredis.Conn) error {
		return cn.ClientSetName(ctx, name).Err()
	}
	c := goredis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("connect named %q: %v", name, err)
	}
	return c
}

// TestDBMode: each slice gets a logical database of its own (not 0, not
// the admin's), recorded so it is stable; keys without any prefix stay
// apart; clone copies the keys; destroy flushes the database and frees it.
func TestDBMode(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		cfg := map[string]any{KeyMode: "db"}
		one, two := testSlice(t, "dba"), testSlice(t, "dbb")
		if p := provisionCfg(t, a, admin, one, cfg); p.Existed == nil || *p.Existed {
			t.Errorf("first provision existed = %v; want false", p.Existed)
		}
		if p := provisionCfg(t, a, admin, one, cfg); p.Existed == nil || !*p.Existed {
			t.Errorf("second provision existed = %v; want true", p.Existed)
		}
		provisionCfg(t, a, admin, two, cfg)
		r1, r2 := resolveT(t, a, admin, one, cfg), resolveT(t, a, admin, two, cfg)
		if r1.Address == r2.Address || r1.Values["db"] == r2.Values["db"] {
			t.Fatalf("both slices resolve to %s (db %s); want different databases", r1.Address, r1.Values["db"])
		}
		au, _ := url.Parse(admin)
		for _, r := range []*sdk.ResolveResponse{r1, r2} {
			if r.Values["db"] == "0" || "/"+r.Values["db"] == au.Path {
				t.Errorf("slice got database %s; want neither 0 nor the admin's", r.Values["db"])
			}
			if _, ok := r.Values["prefix"]; ok {
				t.Errorf("db mode resolves a prefix %q; want none", r.Values["prefix"])
			}
			u, _ := url.Parse(r.Address)
			if u.Path != "/"+r.Values["db"] {
				t.Errorf("address %s does not name database %s", r.Address, r.Values["db"])
			}
		}
		if again := resolveT(t, New(), admin, one, cfg); again.Address != r1.Address {
			t.Errorf("a fresh adapter resolves %s; want the recorded %s", again.Address, r1.Address)
		}
		c1, c2 := client(t, r1.Address), client(t, r2.Address)
		if err := c1.Set(ctx, "greeting", "from one", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c2.Set(ctx, "greeting", "from two", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, _ := c1.Get(ctx, "greeting").Result(); v != "from one" {
			t.Errorf("slice one reads %q; want its own value", v)
		}

		// Clone one into a third slice: the keys come along, the source stays.
		three := testSlice(t, "dbc")
		t.Cleanup(func() {
			_, _ = New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, three, cfg)})
		})
		cl, err := a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: target(admin, three, cfg), Source: one})
		if err != nil {
			t.Fatalf("clone: %v", err)
		}
		if cl.Method != "copy" {
			t.Errorf("clone method %q; want copy", cl.Method)
		}
		r3 := resolveT(t, a, admin, three, cfg)
		if v, err := client(t, r3.Address).Get(ctx, "greeting").Result(); err != nil || v != "from one" {
			t.Errorf("the clone reads %q, %v; want the source's value", v, err)
		}

		// Destroy two: its database is flushed and handed out again.
		idx, _ := strconv.Atoi(r2.Values["db"])
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, two, cfg)}); err != nil {
			t.Fatalf("destroy: %v", err)
		}
		opts, _ := goredis.ParseURL(admin)
		opts.DB = idx
		raw := goredis.NewClient(opts)
		defer raw.Close()
		if n, err := raw.DBSize(ctx).Result(); err != nil || n != 0 {
			t.Errorf("database %d after destroy holds %d keys (%v); want 0", idx, n, err)
		}
		if m, err := client(t, dbZero(admin)).HGetAll(ctx, dbsKey).Result(); err != nil || m[strconv.Itoa(idx)] == two {
			t.Errorf("the assignment of %s survived its destroy: %v, %v", two, m, err)
		}
		if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, two, cfg)}); sdk.CodeOf(err) != sdk.CodeConflict {
			t.Errorf("resolve a destroyed db-mode slice: %v; want code conflict", err)
		}
		if v, _ := c1.Get(ctx, "greeting").Result(); v != "from one" {
			t.Errorf("slice one after two's destroy reads %q; want its value", v)
		}
	})
}

// TestDBModeConfig: db mode refuses acl = true and client_list; prefix
// mode's clone answers unsupported.
func TestDBModeConfig(t *testing.T) {
	for _, cfg := range []map[string]any{
		{KeyMode: "db", KeyACL: true},
		{KeyMode: "db", KeyClientList: true},
		{KeyMode: "database"},
		{KeyMode: 1},
		{KeyClientList: "yes"},
	} {
		if _, err := parseConfig(cfg); sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("parseConfig(%v): %v; want code invalid", cfg, err)
		}
	}
	c, err := parseConfig(map[string]any{KeyMode: "db", KeyACL: false})
	if err != nil || c.mode != modeDB || c.acl == nil || *c.acl {
		t.Errorf("parseConfig(db, acl false) = %+v, %v", c, err)
	}
}

// TestPrefixClone: a prefix-mode clone copies every key of the source's
// prefix (with its TTL) under the target's, replacing what the target had,
// and the target's own user reads them; the source is left as it was.
func TestPrefixClone(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		src, dst := testSlice(t, "src"), testSlice(t, "dst")
		provisionCfg(t, a, admin, src, nil)
		provisionCfg(t, a, admin, dst, nil)
		rs := resolveT(t, a, admin, src, nil)
		cs := client(t, rs.Address)
		p := rs.Values["prefix"]
		for i := range 1500 { // more than one SCAN page
			if err := cs.Set(ctx, fmt.Sprintf("%sitem:%d", p, i), i, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cs.Set(ctx, p+"ttl", "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		if err := client(t, resolveT(t, a, admin, dst, nil).Address).Set(ctx, dst+":stale", "old", 0).Err(); err != nil {
			t.Fatal(err)
		}
		cl, err := a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
		if err != nil {
			t.Fatalf("clone: %v", err)
		}
		if cl.Method != "copy" {
			t.Errorf("method %q; want copy", cl.Method)
		}
		cd := client(t, resolveT(t, a, admin, dst, nil).Address)
		if v, err := cd.Get(ctx, dst+":item:1499").Result(); err != nil || v != "1499" {
			t.Errorf("the clone's item:1499 = %q, %v; want 1499", v, err)
		}
		if ttl, err := cd.TTL(ctx, dst+":ttl").Result(); err != nil || ttl <= 0 {
			t.Errorf("the clone's ttl key has TTL %v, %v; want it kept", ttl, err)
		}
		if n, err := cd.Exists(ctx, dst+":stale").Result(); err != nil || n != 0 {
			t.Errorf("the target's old key survived the clone: %d, %v", n, err)
		}
		if n := len(scanAll(t, client(t, admin), dst+":*")); n != 1501 {
			t.Errorf("the clone holds %d keys; want 1501", n)
		}
		if n := len(scanAll(t, client(t, admin), p+"*")); n != 1501 {
			t.Errorf("the source holds %d keys after the clone; want 1501", n)
		}
	})
}

// dbZero is the admin URL naming logical database 0 (claims, assignments).
func dbZero(admin string) string {
	u, _ := url.Parse(admin)
	u.Path = "/0"
	return u.String()
}
