package mysqladapter

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestResolveValuesFromAdmin: the connection parts come from the admin
// URL or DSN; config.scheme changes the address's scheme and nothing else.
func TestResolveValuesFromAdmin(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		scheme string
		addr   string
		want   map[string]string
	}{
		{"mysql://root:p%40ss@127.0.0.1:3306/", "mysql2", "mysql2://root:p%40ss@127.0.0.1:3306/acme_main",
			map[string]string{"user": "root", "password": "p@ss", "host": "127.0.0.1", "port": "3306"}},
		{"mariadb://app@db.local/?tls=skip-verify", "", "mariadb://app@db.local/acme_main?tls=skip-verify",
			map[string]string{"user": "app", "password": "", "host": "db.local", "port": "3306"}},
		{"root:pw@tcp([::1]:3307)/", "mysql+pymysql", "mysql+pymysql://root:pw@[::1]:3307/acme_main",
			map[string]string{"user": "root", "password": "pw", "host": "::1", "port": "3307"}},
		{"mysql://u:pw@/?socket=/run/mysqld/mysqld.sock", "", "mysql://u:pw@/acme_main?socket=/run/mysqld/mysqld.sock",
			map[string]string{"user": "u", "password": "pw", "socket": "/run/mysqld/mysqld.sock"}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := parseAdmin(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			r := a.resolve("acme_main", config{scheme: tc.scheme})
			if r.Address != tc.addr {
				t.Errorf("address = %q; want %q", r.Address, tc.addr)
			}
			got := maps.Clone(r.Values)
			if got["database"] != "acme_main" || got["dsn"] == "" {
				t.Errorf("values database %q dsn %q; want acme_main and a dsn", got["database"], got["dsn"])
			}
			delete(got, "database")
			delete(got, "dsn")
			if !maps.Equal(got, tc.want) {
				t.Errorf("values = %v; want %v", got, tc.want)
			}
			if !slices.Equal(r.Secret, []string{"password"}) {
				t.Errorf("secret = %v; want [password]", r.Secret)
			}
		})
	}
}

// TestRailsStyleURLConnects: with scheme = "mysql2" the address is what
// Rails reads, and the parts (a user with a password that needs escaping)
// build a URL and a DSN that reach the slice on the real server.
func TestRailsStyleURLConnects(t *testing.T) {
	admin := testAdminURL(t)
	root := openDSN(t, mustAdmin(t, admin).cfg.FormatDSN())
	user := testSlice(t, "usr")
	pw := "p@ss:w/rd#" + user[len(user)-4:]
	exec1(t, root, fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, pw))
	t.Cleanup(func() { _, _ = root.Exec(fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", user)) })
	exec1(t, root, fmt.Sprintf("GRANT ALL ON *.* TO '%s'@'%%'", user))

	au, _ := url.Parse(admin)
	au.User = url.UserPassword(user, pw)
	userAdmin := au.String()
	a := New()
	slice := testSlice(t, "rails")
	cfg := map[string]any{KeyScheme: "mysql2"}
	provisionT(t, a, userAdmin, slice, cfg)
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(userAdmin, slice, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Address, "mysql2://") {
		t.Errorf("address %q; want the mysql2 scheme", r.Address)
	}
	v := r.Values
	if v["user"] != user || v["password"] != pw || v["database"] != slice {
		t.Errorf("values user %q database %q, password right: %v; want %q, %q", v["user"], v["database"], v["password"] == pw, user, slice)
	}
	// What a binky.toml builds from the tokens, escaping the password as
	// the user must for a URL.
	built := (&url.URL{Scheme: "mysql", User: url.UserPassword(v["user"], v["password"]),
		Host: net.JoinHostPort(v["host"], v["port"]), Path: "/" + v["database"]}).String()
	ba, err := parseAdmin(built)
	if err != nil {
		t.Fatal(err)
	}
	ba.cfg.DBName = v["database"]
	for _, dsn := range []string{ba.cfg.FormatDSN(), v["dsn"]} {
		var db, who string
		if err := openDSN(t, dsn).QueryRow("SELECT DATABASE(), CURRENT_USER()").Scan(&db, &who); err != nil {
			t.Fatal(err)
		}
		if db != slice || !strings.HasPrefix(who, user+"@") {
			t.Errorf("connected to %q as %q; want %q as %s", db, who, slice, user)
		}
	}
}

func mustAdmin(t *testing.T, raw string) *admin {
	t.Helper()
	a, err := parseAdmin(raw)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// FuzzScheme: config.scheme is accepted only as a URL scheme, and an
// accepted one gives an address that parses back with that scheme and the
// admin's user, host and database.
func FuzzScheme(f *testing.F) {
	for _, s := range []string{"mysql2", "mysql+pymysql", "Trilogy", "my sql", "mysql2://x@evil/", "", "a.b-c+d"} {
		f.Add(s)
	}
	a, err := parseAdmin("mysql://root:pw@127.0.0.1:3306/")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, scheme string) {
		c, err := parseConfig(map[string]any{KeyScheme: scheme})
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("scheme %q: %v; want code invalid", scheme, err)
			}
			return
		}
		r := a.resolve("acme_main", c)
		u, err := url.Parse(r.Address)
		if err != nil {
			t.Fatalf("scheme %q: address %q does not parse: %v", scheme, r.Address, err)
		}
		if u.Scheme != strings.ToLower(scheme) || u.User.Username() != "root" || u.Host != "127.0.0.1:3306" || u.Path != "/acme_main" {
			t.Fatalf("scheme %q: address %q reads as scheme %q user %q host %q path %q", scheme, r.Address, u.Scheme, u.User.Username(), u.Host, u.Path)
		}
	})
}
