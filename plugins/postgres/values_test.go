package postgresadapter

import (
	"net"
	"net/url"
	"slices"
	"testing"

	"github.com/binkyhq/binky/sdk/names"
)

// TestResolveConnValues: resolve gives user, password (listed secret),
// host, port and database, and a URL built from them the way a framework
// wants it reaches the slice as the right user.
func TestResolveConnValues(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	for _, tc := range []struct {
		name string
		cfg  map[string]any
	}{
		{"admin_credentials", nil},
		{"owner_role", map[string]any{KeyOwnerRole: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slice := testSlice(t, "vals")
			provisionT(t, a, admin, slice, tc.cfg)
			r := resolveT(t, a, admin, slice, tc.cfg)
			v := r.Values
			if got, want := v["database"], names.Postgres(slice); got != want {
				t.Errorf("values.database = %q; want %q", got, want)
			}
			if !slices.Contains(r.Secret, "password") {
				t.Errorf("secret = %v; want it to list password", r.Secret)
			}
			for _, k := range []string{"user", "password", "host", "port"} {
				if _, ok := v[k]; !ok {
					t.Errorf("values has no %q: %v", k, r.Values)
				}
			}
			addr, err := url.Parse(r.Address)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := v["user"], addr.User.Username(); got != want {
				t.Errorf("values.user = %q; want the address's user %q", got, want)
			}
			if pw, ok := addr.User.Password(); ok && v["password"] != pw {
				t.Errorf("values.password differs from the address's password")
			}
			if tc.cfg != nil && (v["user"] != slice || v["password"] == "") {
				t.Errorf("owner_role: values.user = %q (want %q), password empty: %v", v["user"], slice, v["password"] == "")
			}
			built := (&url.URL{Scheme: "postgresql", User: url.UserPassword(v["user"], v["password"]),
				Host: net.JoinHostPort(v["host"], v["port"]), Path: "/" + v["database"]}).String()
			c := connect(t, built)
			var db, user string
			if err := c.QueryRow(t.Context(), "SELECT current_database(), current_user").Scan(&db, &user); err != nil {
				t.Fatal(err)
			}
			if db != v["database"] || user != v["user"] {
				t.Errorf("the built URL reached %s as %s; want %s as %s", db, user, v["database"], v["user"])
			}
		})
	}
}
