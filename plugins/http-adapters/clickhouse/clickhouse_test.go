package clickhouse

import (
	"net/url"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestSliceIsADatabase (real server): provision reports existed false
// then true; the resolved URL puts an application's unqualified tables in
// the slice's database, where the other slice's URL does not see them.
func TestSliceIsADatabase(t *testing.T) {
	admin := adminURL(t)
	a := New()
	one, two := testSlice("one"), testSlice("two")
	if p := provisionT(t, a, admin, one, nil); p.Existed == nil || *p.Existed {
		t.Errorf("provision of a new slice: existed %v; want false", p.Existed)
	}
	if p := provisionT(t, a, admin, one, nil); p.Existed == nil || !*p.Existed {
		t.Errorf("second provision: existed %v; want true", p.Existed)
	}
	provisionT(t, a, admin, two, nil)
	r1, r2 := resolveT(t, a, admin, one), resolveT(t, a, admin, two)
	if r1.Values["database"] != one {
		t.Errorf("values %v; want database %s", r1.Values, one)
	}
	for _, stmt := range []string{
		"CREATE TABLE events (id UInt32, name String) ENGINE = Memory",
		"INSERT INTO events VALUES (1, 'signup'), (2, 'login')",
	} {
		if _, err := query(t, r1.Address, stmt); err != nil {
			t.Fatalf("%s through slice one's URL: %v", stmt, err)
		}
	}
	if got, err := query(t, admin, "SELECT count() FROM `"+one+"`.events"); err != nil || got != "2" {
		t.Errorf("rows in %s.events = %q, %v; want 2", one, got, err)
	}
	_, err := query(t, r2.Address, "SELECT count() FROM events")
	if err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Errorf("slice two's URL reading events: %v; want the table not to exist there", err)
	}
}

// TestDestroyDropsDatabase (real server): destroy drops the database and
// its tables, twice is fine, and resolve then says conflict.
func TestDestroyDropsDatabase(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("gone")
	provisionT(t, a, admin, s, nil)
	if _, err := query(t, resolveT(t, a, admin, s).Address, "CREATE TABLE t (x UInt8) ENGINE = Memory"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if got, err := query(t, admin, "SELECT count() FROM system.databases WHERE name = '"+s+"'"); err != nil || got != "0" {
		t.Errorf("databases named %s after destroy: %q, %v; want 0", s, got, err)
	}
	_, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, nil)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("resolve after destroy: %v; want code conflict", err)
	}
}

// TestErrorCodes (real server where it needs one): failures map onto the
// codes a host acts on, in one line, without the password.
func TestErrorCodes(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	admin := adminURL(t)
	au, _ := url.Parse(admin)
	for _, tc := range []struct {
		name, admin string
		cfg         map[string]any
		want        sdk.Code
	}{
		{"nothing_listens", "http://default:" + secret + "@127.0.0.1:1", nil, sdk.CodeUnreachable},
		{"unknown_host", "http://default:" + secret + "@no-such-host.invalid:8123", nil, sdk.CodeUnreachable},
		{"bad_password", "http://" + au.User.Username() + ":" + secret + "@" + au.Host, nil, sdk.CodeAuth},
		{"unknown_user", "http://binky_nobody:" + secret + "@" + au.Host, nil, sdk.CodeAuth},
		{"engine_refused", admin, map[string]any{KeyEngine: "NoSuchEngine"}, sdk.CodeInvalid},
		{"bad_engine", admin, map[string]any{KeyEngine: "Memory; DROP DATABASE x"}, sdk.CodeInvalid},
		{"no_admin_url", "", nil, sdk.CodeInvalid},
		{"native_port_scheme", "clickhouse://default:" + secret + "@127.0.0.1:9000", nil, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSlice("err")
			defer New().Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, s, nil)})
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(tc.admin, s, tc.cfg)})
			if err == nil {
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error shows the password or spans lines: %q", err)
			}
		})
	}
}

// TestNameRefused (real server): a database name the server refuses (an
// empty identifier, which no slice maps to) is code invalid, and one that
// exists where CREATE without IF NOT EXISTS runs is conflict.
func TestNameRefused(t *testing.T) {
	admin := adminURL(t)
	c := New()
	s, _ := target(&sdk.Target{Slice: "bt_x", AdminURL: admin})
	for stmt, want := range map[string]sdk.Code{
		"CREATE DATABASE " + quoteIdent(""): sdk.CodeInvalid,
		"CREATE DATABASE system":            sdk.CodeConflict,
	} {
		_, err := c.exec(t.Context(), s.ep, stmt)
		if got := sdk.CodeOf(httpFail(err)); got != want {
			t.Errorf("%s: code %q; want %q (%v)", stmt, got, want, err)
		}
	}
}

func TestCloneUnsupported(t *testing.T) {
	_, err := New().Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: tgt("http://127.0.0.1:1", "p_b", nil), Source: "p_a"})
	if sdk.CodeOf(err) != sdk.CodeUnsupported {
		t.Errorf("clone: %v; want code unsupported", err)
	}
}
