package redisadapter

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/names"
)

// TestConformance runs the sdk's conformance suite against the built
// binary on Redis and on Valkey, with ACL users and without, and in db
// mode (where clone works).
func TestConformance(t *testing.T) {
	bin := adapterBinary(t)
	forEachServer(t, func(t *testing.T, admin string) {
		for _, tc := range []struct {
			name, adapter string
			cfg           map[string]any
		}{
			{"acl_users", "", nil},
			{"prefix_only", "valkey", map[string]any{KeyACL: false}},
			{"db_mode", "", map[string]any{KeyMode: "db"}},
			{"client_list", "", map[string]any{KeyClientList: true}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: tc.adapter, AdminURL: admin, Config: tc.cfg})
			})
		}
	})
}

func isNoPerm(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOPERM")
}

// TestKeysAreFenced: a key written with one slice's credentials cannot be
// read with the other's (NOPERM), while the commands an application needs
// work inside its own prefix.
func TestKeysAreFenced(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		one, two := testSlice(t, "one"), testSlice(t, "two")
		provisionT(t, a, admin, one, nil)
		provisionT(t, a, admin, two, nil)
		r1, r2 := resolveT(t, a, admin, one, nil), resolveT(t, a, admin, two, nil)
		p1, p2 := r1.Values["prefix"], r2.Values["prefix"]
		if p1 != one+":" || p2 != two+":" {
			t.Fatalf("prefixes %q %q; want %q %q", p1, p2, one+":", two+":")
		}
		u1, _ := url.Parse(r1.Address)
		if u1.User.Username() != one || r1.Values["user"] != one {
			t.Errorf("resolved user %q (values %q); want %q", u1.User.Username(), r1.Values["user"], one)
		}
		c1, c2 := client(t, r1.Address), client(t, r2.Address)

		// What an application does, inside its prefix.
		if err := c1.Set(ctx, p1+"greeting", "hello", 0).Err(); err != nil {
			t.Fatalf("SET in own prefix: %v", err)
		}
		if v, err := c1.Get(ctx, p1+"greeting").Result(); err != nil || v != "hello" {
			t.Errorf("GET own key = %q, %v; want hello", v, err)
		}
		if err := c1.Expire(ctx, p1+"greeting", time.Hour).Err(); err != nil {
			t.Errorf("EXPIRE own key: %v", err)
		}
		if _, _, err := c1.Scan(ctx, 0, p1+"*", 100).Result(); err != nil {
			t.Errorf("SCAN: %v", err)
		}
		if err := c1.Incr(ctx, p1+"counter").Err(); err != nil {
			t.Errorf("INCR own key: %v", err)
		}
		if err := c1.Del(ctx, p1+"counter").Err(); err != nil {
			t.Errorf("DEL own key: %v", err)
		}
		if err := c1.Info(ctx, "server").Err(); err != nil {
			t.Errorf("INFO (client libraries read the version from it): %v", err)
		}
		sub := c1.Subscribe(ctx, p1+"events")
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatalf("SUBSCRIBE own channel: %v", err)
		}
		if err := c1.Publish(ctx, p1+"events", "ping").Err(); err != nil {
			t.Errorf("PUBLISH own channel: %v", err)
		}
		if m, err := sub.ReceiveMessage(ctx); err != nil || m.Payload != "ping" {
			t.Errorf("received %v, %v; want the published ping", m, err)
		}

		// What it must not do.
		if err := c2.Set(ctx, p2+"greeting", "other", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for what, err := range map[string]error{
			"GET the other slice's key":        c1.Get(ctx, p2+"greeting").Err(),
			"GET with the other's credentials": c2.Get(ctx, p1+"greeting").Err(),
			"SET outside the prefix":           c1.Set(ctx, "unprefixed", "x", 0).Err(),
			"PUBLISH to the other's channel":   c1.Publish(ctx, p2+"events", "x").Err(),
			"GET the adapter's secret":         c1.Get(ctx, secretKey).Err(),
			"FLUSHDB":                          c1.FlushDB(ctx).Err(),
			"KEYS":                             c1.Keys(ctx, "*").Err(),
			"ACL SETUSER":                      c1.ACLSetUser(ctx, one, "~*").Err(),
			"CONFIG GET":                       c1.ConfigGet(ctx, "*").Err(),
		} {
			if !isNoPerm(err) {
				t.Errorf("%s: %v; want NOPERM", what, err)
			}
		}
		if v, err := client(t, admin).Get(ctx, p2+"greeting").Result(); err != nil || v != "other" {
			t.Errorf("the other slice's key = %q, %v after the attempts; want it untouched", v, err)
		}
	})
}

// TestDestroyRemovesKeysAndUser: destroy deletes every key under the
// prefix in every database (more than one SCAN page), leaves a neighbour's
// keys alone, and removes the user so its address no longer works.
func TestDestroyRemovesKeysAndUser(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		s, neighbour := testSlice(t, "gone"), ""
		neighbour = s + "x" // its prefix "<s>x:" does not start with "<s>:"
		provisionT(t, a, admin, s, nil)
		provisionT(t, a, admin, neighbour, nil)
		addr := resolveT(t, a, admin, s, nil).Address
		prefix := names.RedisPrefix(s)

		ac := client(t, admin)
		other := admin3(t, admin)
		pipe := ac.Pipeline()
		for i := range 2500 {
			pipe.Set(ctx, fmt.Sprintf("%skey:%d", prefix, i), i, time.Hour)
		}
		pipe.Set(ctx, names.RedisPrefix(neighbour)+"keep", 1, time.Hour)
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Set(ctx, prefix+"in-db-3", 1, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Del(context.Background(), prefix+"in-db-3") })

		for i := range 2 {
			if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
				t.Fatalf("destroy %d: %v", i+1, err)
			}
		}
		for _, c := range []*goredis.Client{ac, other} {
			if keys := scanAll(t, c, prefix+"*"); len(keys) != 0 {
				t.Errorf("db %d: %d keys under %s survived destroy", c.Options().DB, len(keys), prefix)
			}
		}
		if n, _ := ac.Exists(ctx, names.RedisPrefix(neighbour)+"keep").Result(); n != 1 {
			t.Errorf("destroy of %s deleted the neighbour slice's key", s)
		}
		users, err := ac.ACLUsers(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(users, s) {
			t.Errorf("ACL user %s survived destroy", s)
		}
		err = client(t, addr).Ping(ctx).Err()
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("the destroyed slice's address: PING %v; want WRONGPASS", err)
		}
	})
}

// admin3 is an admin client on logical database 3.
func admin3(t *testing.T, admin string) *goredis.Client {
	t.Helper()
	return client(t, admin3URL(admin))
}

func scanAll(t *testing.T, c *goredis.Client, match string) []string {
	t.Helper()
	var all []string
	var cursor uint64
	for {
		keys, next, err := c.Scan(t.Context(), cursor, match, 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
		if cursor = next; cursor == 0 {
			return all
		}
	}
}

// TestPrefixOnly: with acl = false no user is made and resolve answers the
// admin address with the prefix.
func TestPrefixOnly(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		a := New()
		cfg := map[string]any{KeyACL: false}
		s := testSlice(t, "plain")
		provisionT(t, a, admin, s, cfg)
		r := resolveT(t, a, admin, s, cfg)
		if r.Address != admin || r.Values["prefix"] != s+":" {
			t.Errorf("resolve = %s %v; want %s and prefix %s:", r.Address, r.Values, admin, s)
		}
		users, err := client(t, admin).ACLUsers(t.Context()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(users, s) {
			t.Errorf("acl = false made ACL user %s", s)
		}
	})
}

// TestOddBranchNames: branches with odd characters give users and
// prefixes the server accepts, and they work.
func TestOddBranchNames(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		a := New()
		for _, branch := range []string{"Feat/ÄÖ..//x", "*?[]\\ glob", "x" + strings.Repeat("ß/", 150), "a b:c"} {
			s := names.Slice("bt"+testSlice(t, "x")[3:11], names.Worktree(branch))
			provisionT(t, a, admin, s, nil)
			r := resolveT(t, a, admin, s, nil)
			c := client(t, r.Address)
			if err := c.Set(t.Context(), r.Values["prefix"]+"k", "v", time.Minute).Err(); err != nil {
				t.Errorf("branch %q: SET in the slice's prefix: %v", branch, err)
			}
		}
	})
}

// TestErrorCodes: real failures map onto the codes a host acts on, and the
// admin password never shows.
func TestErrorCodes(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	forEachServer(t, func(t *testing.T, admin string) {
		host := strings.TrimPrefix(admin, "redis://")
		for _, tc := range []struct {
			name  string
			admin string
			cfg   map[string]any
			want  sdk.Code
		}{
			{"nothing_listens", "redis://:" + secret + "@127.0.0.1:1/0", nil, sdk.CodeUnreachable},
			{"unknown_host", "redis://:" + secret + "@no-such-host.invalid:6379/0", nil, sdk.CodeUnreachable},
			{"unknown_user", "redis://binky_no_such_user:" + secret + "@" + host, nil, sdk.CodeAuth},
			{"no_admin_url", "", nil, sdk.CodeInvalid},
			{"wrong_scheme", "http://:" + secret + "@127.0.0.1/", nil, sdk.CodeInvalid},
			{"bad_db", "redis://:" + secret + "@127.0.0.1:6379/x", nil, sdk.CodeInvalid},
			{"not_a_url", "redis://:" + secret + "@[::1", nil, sdk.CodeInvalid},
			{"unknown_config", admin, map[string]any{"acls": true}, sdk.CodeInvalid},
			{"config_type", admin, map[string]any{KeyACL: "yes"}, sdk.CodeInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// With an owner, the claim is the first thing provision
				// reads from the server.
				for _, owner := range []string{"", "home-a"} {
					tg := target(tc.admin, "bt_never_made", tc.cfg)
					tg.Owner = owner
					_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tg})
					if err == nil {
						t.Fatalf("owner %q: provision succeeded; want an error", owner)
					}
					if got := sdk.CodeOf(err); got != tc.want {
						t.Errorf("owner %q: code %q; want %q (%v)", owner, got, tc.want, err)
					}
					if strings.Contains(err.Error(), secret) {
						t.Errorf("owner %q: error shows the admin password: %v", owner, err)
					}
				}
			})
		}
	})
}

func TestGlobEscape(t *testing.T) {
	for in, want := range map[string]string{
		"p_main:": "p_main:",
		"a*b?c":   `a\*b\?c`,
		`[x]\`:    `\[x\]\\`,
	} {
		if got := globEscape(in); got != want {
			t.Errorf("globEscape(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestUserRules(t *testing.T) {
	got := strings.Join(userRules("p_main:", "pw", true, false), " ")
	want := "reset on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~p_main:* &p_main:* +@all -@admin -@dangerous +info +client|setname +client|getname +client|id"
	if got != want {
		t.Errorf("rules %q; want %q", got, want)
	}
	got = strings.Join(userRules("p_main:", "pw", false, true), " ")
	want = "reset on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~p_main:* +@all -@admin -@dangerous +info +client|setname +client|getname +client|id +client|list"
	if got != want {
		t.Errorf("rules with client_list %q; want %q", got, want)
	}
}

// FuzzParseAdminURL: an admin_url is refused with code invalid, or yields
// an address that parses and carries the slice's user, and both addresses
// Resolve can answer (the admin URL without ACLs, the slice user's with)
// round-trip through net/url, parseAdminURL and go-redis to the same
// server and database.
func FuzzParseAdminURL(f *testing.F) {
	for _, s := range []string{
		"redis://127.0.0.1:6379/0",
		"rediss://u:p%40ss@cache:6380/2?dial_timeout=3s",
		"valkey://127.0.0.1/1",
		"unix:///run/redis.sock?db=3",
		"redis://:pw@[::1",
		"http://x/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, _, err := parseAdminURL(raw)
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid", sdk.CodeOf(err))
			}
			return
		}
		out := slicedURL(u, url.UserPassword("p_main", "abc"))
		back, err := url.Parse(out)
		if err != nil || back.User.Username() != "p_main" {
			t.Fatalf("address %q: %v, %v; want user p_main", out, back, err)
		}
		checkRoundTrip(t, raw)
	})
}
