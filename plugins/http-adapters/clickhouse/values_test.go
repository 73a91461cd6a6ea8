package clickhouse

import (
	"maps"
	"net"
	"net/url"
	"slices"
	"testing"
)

// TestResolveValues (real server): user, password (listed secret), host,
// port and database; a URL built from them queries the slice's database.
func TestResolveValues(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("vals")
	provisionT(t, a, admin, s, nil)
	r := resolveT(t, a, admin, s)
	v := r.Values
	au, _ := url.Parse(admin)
	pw, _ := au.User.Password()
	if v["database"] != s || v["user"] != au.User.Username() || v["password"] != pw || v["host"] != au.Hostname() || v["port"] != au.Port() {
		t.Errorf("values user %q host %q port %q database %q; want the admin URL's and %q", v["user"], v["host"], v["port"], v["database"], s)
	}
	if !slices.Contains(r.Secret, "password") {
		t.Errorf("secret %v; want password listed", r.Secret)
	}
	built := url.URL{Scheme: "http", User: url.UserPassword(v["user"], v["password"]), Host: net.JoinHostPort(v["host"], v["port"]),
		RawQuery: url.Values{"database": {v["database"]}}.Encode()}
	if got, err := query(t, built.String(), "SELECT currentDatabase()"); err != nil || got != s {
		t.Errorf("currentDatabase() through the built URL = %q, %v; want %q", got, err, s)
	}
}

// TestResolvedQueryCredentials: credentials given as user= and password=
// parameters become the values too.
func TestResolvedQueryCredentials(t *testing.T) {
	r := resolved("http://127.0.0.1:8123/?user=app&password=pw-x&database=acme_main", "acme_main")
	want := map[string]string{"user": "app", "password": "pw-x", "host": "127.0.0.1", "port": "8123", "database": "acme_main"}
	if !maps.Equal(r.Values, want) || !slices.Equal(r.Secret, []string{"password"}) {
		t.Errorf("values %v secret %v; want %v and [password]", r.Values, r.Secret, want)
	}
	r = resolved("https://ch.example.com/?database=d", "d")
	if r.Values["port"] != "443" || r.Values["user"] != "" {
		t.Errorf("https without port: values %v; want port 443, no user", r.Values)
	}
}
