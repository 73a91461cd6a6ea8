package mongoadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestConformance runs the sdk's conformance suite against the built
// binary: every check must pass. The clone check passes two ways, and the
// test asserts the one the server calls for: on FerretDB, which has no
// $out, clone answers code unsupported and the check passes saying the
// server cannot clone (binky's fallback path); on MongoDB 4.4+ it clones
// for real.
func TestConformance(t *testing.T) {
	admin := adminURL(t)
	ferret := isFerret(t, client(t, admin))
	bin := adaptertest.Binary(t, "binky-adapter-mongodb")
	var clone *adaptertest.Result
	_, err := adaptertest.Run(t.Context(), adaptertest.Options{Binary: bin, AdminURL: admin, DataDir: t.TempDir()}, func(r adaptertest.Result) {
		if r.Check == "clone" {
			clone = &r
		}
		t.Run(r.Check, func(t *testing.T) {
			if !r.OK {
				t.Errorf("%s (%s tier)", r.Detail, r.Tier)
			}
			t.Log(r.Detail)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "cloned " // MongoDB 4.4+: aggregate $out
	if ferret {
		want = "cannot clone" // FerretDB: unsupported, binky falls back
	}
	switch {
	case clone == nil:
		t.Errorf("the suite ran no clone check; describe says clone:true")
	case clone.OK && !strings.Contains(clone.Detail, want):
		t.Errorf("clone check passed with %q; want it to say %q on this server (FerretDB: %v)", clone.Detail, want, ferret)
	}
}

func testSlice(suffix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

// TestDatabasePerSlice: resolve names the slice's database; a document
// written through one slice's address is invisible through another's;
// destroy drops the database and leaves the neighbour; clone copies the
// documents and indexes on MongoDB 4.4+ and answers unsupported on
// FerretDB.
func TestDatabasePerSlice(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()
	one, two := testSlice("one"), testSlice("two")
	for _, s := range []string{one, two, one + "_c"} {
		if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s)})
		})
	}
	r1, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, one)})
	if err != nil || r1.Values["database"] != one || !strings.Contains(r1.Address, "/"+one) {
		t.Fatalf("resolve %s = %+v, %v", one, r1, err)
	}
	r2, _ := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, two)})
	c1, c2 := client(t, r1.Address), client(t, r2.Address)
	if _, err := c1.Database(one).Collection("items").InsertOne(ctx, bson.D{{Key: "note", Value: "only in one"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Database(one).Collection("items").Indexes().CreateOne(ctx, mongoIndex("note")); err != nil {
		t.Fatal(err)
	}
	if n, err := c2.Database(two).Collection("items").CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Errorf("slice two sees %d items (%v); want 0", n, err)
	}

	_, err = a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: target(admin, one+"_c"), Source: one})
	if isFerret(t, c1) {
		if sdk.CodeOf(err) != sdk.CodeUnsupported || !strings.Contains(err.Error(), "FerretDB") {
			t.Errorf("clone on FerretDB: %v; want code unsupported, naming FerretDB as the cause", err)
		}
	} else {
		if err != nil {
			t.Fatalf("clone: %v", err)
		}
		if n, _ := c1.Database(one+"_c").Collection("items").CountDocuments(ctx, bson.D{}); n != 1 {
			t.Errorf("clone holds %d items; want 1", n)
		}
		specs, _ := c1.Database(one + "_c").Collection("items").Indexes().ListSpecifications(ctx)
		if len(specs) != 2 {
			t.Errorf("clone has %d indexes; want 2 (_id_ and note)", len(specs))
		}
	}

	for range 2 {
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, one)}); err != nil {
			t.Fatal(err)
		}
	}
	dbs, err := c1.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(dbs, one) {
		t.Errorf("database %s survives destroy", one)
	}
}

// TestErrorCodes: an unreachable server and a name that is not a slice give
// one-line errors with the right code and no piece of the password.
func TestErrorCodes(t *testing.T) {
	admin := adminURL(t)
	const pw = "S3cret-Mongo-Pw"
	for _, tc := range []struct {
		name, admin, slice string
		want               sdk.Code
	}{
		{"unreachable", "mongodb://u:" + pw + "@127.0.0.1:1/?serverSelectionTimeoutMS=500", "bt_main", sdk.CodeUnreachable},
		{"not_a_slice", admin, "Not A Slice", sdk.CodeInvalid},
		{"bad_url", "mongodb://u:" + pw + "@h:port", "bt_main", sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New()
			defer a.Close()
			_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(tc.admin, tc.slice)})
			if sdk.CodeOf(err) != tc.want {
				t.Errorf("provision: %v; want code %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), pw[:6])) {
				t.Errorf("error spans lines or shows the password: %q", err)
			}
			t.Log(err)
		})
	}
}

// FuzzAdminSecrets: no parse-path error shows a piece of the password, and
// resolve's address parses back through parseAdminURL naming the slice's
// database.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("mongodb://", "u", "S3cr3t-MgPw/9", "127.0.0.1:27017", "/admin")
	f.Add("mongodb://", "u", "p@ss#word", "h", "/?authSource=admin")
	f.Add("mongodb+srv://", "u", "pw pw pw", "[::1", "")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := scheme + user + ":" + pw + "@" + host + rest
		if _, err := parseAdminURL(raw); err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseAdminURL(%q): error %q shows %q", raw, err, p)
			}
			return
		}
		if strings.HasPrefix(raw, "mongodb+srv://") {
			return // Connect would look up SRV records
		}
		a := New()
		defer a.Close()
		r, err := a.Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main")})
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("resolve with %q: error %q shows %q", raw, err, p)
			}
			return
		}
		back, err := parseAdminURL(r.Address)
		if err != nil || back.cs.Database != "acme_main" {
			t.Fatalf("admin %q: address %q parses back as %v, %v; want database acme_main", raw, r.Address, back, err)
		}
	})
}

// leakedPiece returns a piece of pw of sdk.MinScrub bytes that msg still
// holds outside its masks, or "".
func leakedPiece(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			p := pw[i : i+sdk.MinScrub]
			if !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
