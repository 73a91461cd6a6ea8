package rabbitmq

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

var perSlice = map[string]any{KeyUser: PerSlice}

// TestPerSliceUsersAreFenced (real server): each slice's user logs in over
// AMQP and opens its own vhost, is refused the other slice's vhost, and
// resolve gives the same password from a second adapter instance.
func TestPerSliceUsersAreFenced(t *testing.T) {
	admin := adminURL(t)
	a := New()
	one, two := testSlice("one"), testSlice("two")
	if p := provisionT(t, a, admin, one, perSlice); p.Existed == nil || *p.Existed {
		t.Errorf("provision of a new slice: existed %v; want false", p.Existed)
	}
	if p := provisionT(t, a, admin, one, perSlice); p.Existed == nil || !*p.Existed {
		t.Errorf("second provision: existed %v; want true", p.Existed)
	}
	provisionT(t, a, admin, two, perSlice)
	r1, r2 := resolveT(t, a, admin, one, perSlice), resolveT(t, a, admin, two, perSlice)
	if again := resolveT(t, New(), admin, one, perSlice); again.Address != r1.Address {
		t.Errorf("a second adapter resolved a different address for %s", one)
	}
	if r1.Values["vhost"] != one || r1.Values["user"] != one {
		t.Errorf("values %v; want vhost and user %s", r1.Values, one)
	}
	if err := amqpOpen(r1.Address); err != nil {
		t.Errorf("slice one's user opening its vhost: %v", err)
	}
	a1, _ := parseAMQP(r1.Address)
	a2, _ := parseAMQP(r2.Address)
	cross := url.URL{Scheme: "amqp", User: url.UserPassword(a1.user, a1.password), Host: a1.host + ":" + a1.port, Path: "/" + a2.vhost}
	if err := amqpOpen(cross.String()); !errors.Is(err, errVhost) {
		t.Errorf("slice one's user opening slice two's vhost: %v; want it refused", err)
	}
	wrong := url.URL{Scheme: "amqp", User: url.UserPassword(a1.user, a2.password), Host: a1.host + ":" + a1.port, Path: "/" + a1.vhost}
	if err := amqpOpen(wrong.String()); !errors.Is(err, errLogin) {
		t.Errorf("slice one's user with slice two's password: %v; want the login refused", err)
	}
}

// TestAdminUser (real server): without config user the admin URL's user
// gets the permissions and the address carries its credentials.
func TestAdminUser(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("adm")
	provisionT(t, a, admin, s, nil)
	r := resolveT(t, a, admin, s, nil)
	au, _ := url.Parse(admin)
	got, err := parseAMQP(r.Address)
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := au.User.Password(); got.user != au.User.Username() || got.password != pw || got.vhost != s || got.port != "5672" {
		t.Errorf("address %s; want the admin's user and password, port 5672, vhost %s", r.Address, s)
	}
	if err := amqpOpen(r.Address); err != nil {
		t.Errorf("opening the slice's vhost as the admin user: %v", err)
	}
}

// TestDestroyRemovesVhostAndUser (real server): destroy deletes the vhost
// and the per-slice user, twice is fine, and the old address is refused.
func TestDestroyRemovesVhostAndUser(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("gone")
	provisionT(t, a, admin, s, perSlice)
	addr := resolveT(t, a, admin, s, perSlice).Address
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, s, perSlice)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if st := mgmt(t, admin, "api", "vhosts", s); st != 404 {
		t.Errorf("GET vhost after destroy: %d; want 404", st)
	}
	if st := mgmt(t, admin, "api", "users", s); st != 404 {
		t.Errorf("GET user after destroy: %d; want 404", st)
	}
	if err := amqpOpen(addr); !errors.Is(err, errLogin) {
		t.Errorf("the destroyed slice's address: %v; want the login refused", err)
	}
	_, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, perSlice)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("resolve after destroy: %v; want code conflict", err)
	}
}

// TestErrorCodes (real server where it needs one): failures map onto the
// codes a host acts on, in one line, without the admin password.
func TestErrorCodes(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	admin := adminURL(t)
	au, _ := url.Parse(admin)
	for _, tc := range []struct {
		name, admin, slice string
		cfg                map[string]any
		want               sdk.Code
	}{
		{"nothing_listens", "http://guest:" + secret + "@127.0.0.1:1", "bt_never_made", nil, sdk.CodeUnreachable},
		{"unknown_host", "http://guest:" + secret + "@no-such-host.invalid:15672", "bt_never_made", nil, sdk.CodeUnreachable},
		{"bad_password", "http://guest:" + secret + "@" + au.Host, "bt_never_made", nil, sdk.CodeAuth},
		{"not_a_slice", admin, "Not-A-Slice", nil, sdk.CodeInvalid},
		{"no_admin_url", "", "bt_never_made", nil, sdk.CodeInvalid},
		{"amqp_scheme", "amqp://guest:" + secret + "@127.0.0.1:5672", "bt_never_made", nil, sdk.CodeInvalid},
		{"unknown_config", admin, "bt_never_made", map[string]any{"users": "x"}, sdk.CodeInvalid},
		{"unknown_user", admin, "bt_never_made_u", map[string]any{KeyUser: "binky_no_such_user"}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(tc.admin, tc.slice, tc.cfg)})
			if err == nil {
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error shows the password or spans lines: %q", err)
			}
			if tc.admin == admin && mgmt(t, admin, "api", "vhosts", tc.slice) != 404 {
				t.Errorf("a refused provision left vhost %s behind", tc.slice)
				New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, tc.slice, nil)})
			}
		})
	}
}

func TestCloneUnsupported(t *testing.T) {
	_, err := New().Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: tgt("http://127.0.0.1:1", "p_b", nil), Source: "p_a"})
	if sdk.CodeOf(err) != sdk.CodeUnsupported {
		t.Errorf("clone: %v; want code unsupported", err)
	}
}
