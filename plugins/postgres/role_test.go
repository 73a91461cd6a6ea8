package postgresadapter

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
)

var ownerRole = map[string]any{KeyOwnerRole: true}

// TestOwnerRoleFences: with owner_role each slice resolves to its own
// role, which owns its database, cannot connect to another slice's
// database and cannot read the secret; destroy drops the role.
func TestOwnerRoleFences(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	one, two := testSlice(t, "one"), testSlice(t, "two")
	provisionT(t, a, admin, one, ownerRole)
	provisionT(t, a, admin, two, ownerRole)
	r1 := resolveT(t, a, admin, one, ownerRole)
	u1, err := url.Parse(r1.Address)
	if err != nil {
		t.Fatal(err)
	}
	if got := u1.User.Username(); got != one {
		t.Errorf("resolved user %q; want the slice role %q", got, one)
	}
	if pw, _ := u1.User.Password(); len(pw) != 64 {
		t.Errorf("resolved password has %d characters; want 64", len(pw))
	}
	if again := resolveT(t, New(), admin, one, ownerRole); again.Address != r1.Address {
		t.Errorf("a second adapter resolved a different address; want the derived password to be stable")
	}

	c1 := connect(t, r1.Address)
	var user string
	if err := c1.QueryRow(t.Context(), "SELECT current_user").Scan(&user); err != nil || user != one {
		t.Fatalf("current_user %q (%v); want %q", user, err, one)
	}
	exec1(t, c1, "CREATE TABLE mine (x int)") // owner may create in public

	// The same credentials, pointed at the other slice's database.
	other := *u1
	other.Path = "/" + two
	_, err = pgx.Connect(t.Context(), other.String())
	if code := pgErrCode(err); code != codeInsufficientPriv {
		t.Errorf("role %s connecting to %s: error %v (SQLSTATE %q); want permission denied (%s)", one, two, err, code, codeInsufficientPriv)
	}
	// And at the admin database, where the secret lives.
	adminDB := *u1
	adminDB.Path = mustURL(t, admin).Path
	if c, err := pgx.Connect(t.Context(), adminDB.String()); err == nil {
		var key []byte
		err := c.QueryRow(t.Context(), "SELECT key FROM binky.adapter_secret").Scan(&key)
		if code := pgErrCode(err); code != codeInsufficientPriv {
			t.Errorf("role %s reading binky.adapter_secret: %v (SQLSTATE %q); want permission denied", one, err, code)
		}
		_ = c.Close(t.Context())
	}

	ac := adminConn(t, admin)
	if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1 AND pg_get_userbyid(datdba) = $1", one); got != 1 {
		t.Errorf("database %s is not owned by role %s", one, one)
	}
	_ = c1.Close(t.Context())
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, one, ownerRole)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := count(t, ac, "SELECT count(*) FROM pg_roles WHERE rolname = $1", one); got != 0 {
		t.Errorf("role %s survived destroy", one)
	}
}

// TestOwnerRoleLeavesForeignRoles: a role binky did not make is neither
// taken over by provision nor dropped by destroy.
func TestOwnerRoleLeavesForeignRoles(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "foreign")
	ac := adminConn(t, admin)
	exec1(t, ac, "CREATE ROLE "+ident(s)+" NOLOGIN")
	t.Cleanup(func() {
		if _, err := ac.Exec(context.Background(), "DROP ROLE IF EXISTS "+ident(s)); err != nil {
			t.Errorf("cleanup: drop role %s: %v", s, err)
		}
	})
	cleanupSlice(t, a, admin, s)
	_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, ownerRole)})
	if got := sdk.CodeOf(err); got != sdk.CodeConflict {
		t.Errorf("provision over a foreign role: code %q; want %q (%v)", got, sdk.CodeConflict, err)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, ownerRole)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := count(t, ac, "SELECT count(*) FROM pg_roles WHERE rolname = $1", s); got != 1 {
		t.Errorf("destroy dropped a role binky did not make")
	}
}

// TestOwnerRoleClone: a clone of a golden built by the golden's role
// belongs to the clone's role — it can read, write and alter the seeded
// tables — while the golden keeps its owner and stays closed to the clone.
func TestOwnerRoleClone(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, ownerRole)
	cleanupSlice(t, a, admin, dst)
	seed(t, resolveT(t, a, admin, src, ownerRole).Address, 10)
	resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, ownerRole), Source: src})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	t.Logf("clone method %s", resp.Method)
	cu := resolveT(t, a, admin, dst, ownerRole).Address
	cc := connect(t, cu)
	exec1(t, cc, "INSERT INTO items (name) VALUES ('from the clone')")
	exec1(t, cc, "ALTER TABLE items ADD COLUMN extra int")
	if got := count(t, cc, "SELECT count(*) FROM items"); got != 11 {
		t.Errorf("clone has %d rows; want 11", got)
	}
	ac := adminConn(t, admin)
	for db, owner := range map[string]string{src: src, dst: dst} {
		if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1 AND pg_get_userbyid(datdba) = $2", db, owner); got != 1 {
			t.Errorf("database %s is not owned by %s after the clone", db, owner)
		}
	}
	toGolden := mustURL(t, cu)
	toGolden.Path = "/" + src
	_, err = pgx.Connect(t.Context(), toGolden.String())
	if code := pgErrCode(err); code != codeInsufficientPriv {
		t.Errorf("clone role connecting to the golden: %v; want permission denied", err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSCRAMVerifier checks the verifier against the exchange in RFC 7677
// section 3: the server signature and the client proof computed from the
// stored keys must match the RFC's.
func TestSCRAMVerifier(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := scramVerifier("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '$' || r == ':' })
	if len(parts) != 5 || parts[0] != "SCRAM-SHA-256" || parts[1] != "4096" || parts[2] != "W22ZaJ0SNY7soEsUEjb6gQ==" {
		t.Fatalf("verifier %q; want SCRAM-SHA-256$4096:<salt>$<stored>:<server>", v)
	}
	stored, _ := base64.StdEncoding.DecodeString(parts[3])
	serverKey, _ := base64.StdEncoding.DecodeString(parts[4])
	const nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	auth := "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=" + nonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=" + nonce
	if got, want := base64.StdEncoding.EncodeToString(hmacSHA256(serverKey, auth)), "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; got != want {
		t.Errorf("server signature %s; want %s", got, want)
	}
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	sig := hmacSHA256(stored, auth)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	if got := sha256.Sum256(clientKey); !hmac.Equal(got[:], stored) {
		t.Errorf("the RFC's client proof does not match the stored key")
	}
	if _, err := scramVerifier("no spaces allowed", salt, 4096); err == nil {
		t.Error("a password with a space was accepted; want it refused")
	}
}

func TestDerivePassword(t *testing.T) {
	k1, k2 := make([]byte, 32), make([]byte, 32)
	k2[0] = 1
	a, b, c := derivePassword(k1, "p_one"), derivePassword(k1, "p_two"), derivePassword(k2, "p_one")
	if a == b || a == c {
		t.Errorf("passwords collide: %s %s %s", a, b, c)
	}
	if a != derivePassword(k1, "p_one") {
		t.Error("derivePassword is not deterministic")
	}
}
