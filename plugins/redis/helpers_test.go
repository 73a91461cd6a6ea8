package redisadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// testServer is one server the suite runs against.
type testServer struct {
	name  string // redis or valkey
	env   string // the variable that overrides the URL
	def   string // the URL every test machine has
	start string // how to start it
}

var testServers = []testServer{
	{"redis", "BINKY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0", "start redis-server on 127.0.0.1:6379"},
	{"valkey", "BINKY_TEST_VALKEY_URL", "redis://127.0.0.1:6390/0", "run scripts/testenv up (installs and starts Valkey on 127.0.0.1:6390)"},
}

func (s testServer) url() string {
	if u := os.Getenv(s.env); u != "" {
		return u
	}
	return s.def
}

// forEachServer runs f as a subtest per server; a server that does not
// answer fails the test when CI=true and skips it otherwise.
func forEachServer(t *testing.T, f func(t *testing.T, admin string)) {
	t.Helper()
	for _, s := range testServers {
		t.Run(s.name, func(t *testing.T) {
			admin := s.url()
			if err := ping(admin); err != nil {
				msg := s.name + " is not reachable at " + admin + ": " + err.Error() + "; " + s.start
				adaptertest.MissingServer(t, msg)
			}
			f(t, admin)
		})
	}
}

func ping(admin string) error {
	opts, err := goredis.ParseURL(admin)
	if err != nil {
		return err
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	return c.Ping(ctx).Err()
}

// client is a go-redis client on url, closed when the test ends.
func client(t *testing.T, url string) *goredis.Client {
	t.Helper()
	opts, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	opts.DisableIdentity = true
	c := goredis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func testSlice(t *testing.T, suffix string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func target(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

// cleanupSlice destroys a slice (keys and user) when the test ends, with a
// fresh adapter.
func cleanupSlice(t *testing.T, admin, slice string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, nil)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func provisionT(t *testing.T, a *Redis, admin, slice string, cfg map[string]any) {
	t.Helper()
	cleanupSlice(t, admin, slice)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, cfg)}); err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
}

func resolveT(t *testing.T, a *Redis, admin, slice string, cfg map[string]any) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

// adapterBinary is binky-adapter-redis, built or found by the kit.
func adapterBinary(t *testing.T) string {
	t.Helper()
	return adaptertest.Binary(t, "binky-adapter-redis")
}

// TestMain removes the secret key on each server where this run made it
// and no ACL user but default is left: a run beside this one (another
// module's, another session's) may still be using the key, and a new one
// under its slices' users would change their passwords between two
// resolves.
func TestMain(m *testing.M) {
	had := map[string]bool{}
	for _, s := range testServers {
		had[s.name] = secretExists(s.url())
	}
	code := m.Run()
	for _, s := range testServers {
		if !had[s.name] && !otherUsers(s.url()) {
			deleteSecret(s.url())
		}
	}
	os.Exit(code)
}

// otherUsers reports whether the server has an ACL user besides default
// (or cannot say).
func otherUsers(admin string) bool {
	opts, err := goredis.ParseURL(admin)
	if err != nil {
		return true
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	users, err := c.Do(ctx, "ACL", "USERS").StringSlice()
	if err != nil {
		return !unknownCommand(err) // a server without ACLs has no users to keep a key for
	}
	for _, u := range users {
		if u != "default" {
			return true
		}
	}
	return false
}

func secretExists(admin string) bool {
	opts, err := goredis.ParseURL(admin)
	if err != nil {
		return true // leave it alone
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	n, err := c.Exists(ctx, secretKey).Result()
	return err != nil || n > 0
}

func deleteSecret(admin string) {
	opts, err := goredis.ParseURL(admin)
	if err != nil {
		return
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	_ = c.Del(ctx, secretKey).Err()
}
