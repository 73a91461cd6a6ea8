package mongoadapter

import (
	"context"
	"maps"
	"net"
	"net/url"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/binkyhq/binky/sdk"
)

// TestResolvedValues: the connection parts come from the admin URL; a
// seed list gives no host or port.
func TestResolvedValues(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want map[string]string
	}{
		{"mongodb://app:s3cret@db.local:27018/admin", map[string]string{"user": "app", "password": "s3cret", "host": "db.local", "port": "27018", "auth_source": "admin", "database": "acme_main"}},
		{"mongodb://127.0.0.1", map[string]string{"user": "", "password": "", "host": "127.0.0.1", "port": "27017", "database": "acme_main"}},
		{"mongodb+srv://u:p@cluster.example.com/?authSource=x", map[string]string{"user": "u", "password": "p", "host": "cluster.example.com", "auth_source": "x", "database": "acme_main"}},
		{"mongodb://u:p@h1:27017,h2:27017/", map[string]string{"user": "u", "password": "p", "auth_source": "admin", "database": "acme_main"}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			r := (&admin{u: u}).resolved("acme_main")
			if !maps.Equal(r.Values, tc.want) {
				t.Errorf("values = %v; want %v", r.Values, tc.want)
			}
			if !slices.Equal(r.Secret, []string{"password"}) {
				t.Errorf("secret = %v; want [password]", r.Secret)
			}
		})
	}
}

// TestResolvedValuesConnect: on the real server, a URL built from the
// parts reaches the slice's database.
func TestResolvedValuesConnect(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()
	s := testSlice("vals")
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s)})
	})
	r, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, s)})
	if err != nil {
		t.Fatal(err)
	}
	v := r.Values
	if v["database"] != s || v["host"] == "" || v["port"] == "" {
		t.Fatalf("values %v; want database %s, host and port", v, s)
	}
	b := url.URL{Scheme: "mongodb", Host: net.JoinHostPort(v["host"], v["port"]), Path: "/" + v["database"]}
	if v["user"] != "" {
		b.User = url.UserPassword(v["user"], v["password"])
		b.RawQuery = url.Values{"authSource": {v["auth_source"]}}.Encode()
	}
	c := client(t, b.String())
	if _, err := c.Database(v["database"]).Collection("items").InsertOne(ctx, bson.D{{Key: "k", Value: 1}}); err != nil {
		t.Fatalf("insert through the built URL: %v", err)
	}
	if n, err := client(t, r.Address).Database(s).Collection("items").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("the slice's address sees %d items (%v); want 1", n, err)
	}
}
