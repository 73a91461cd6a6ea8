package mongoadapter

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/binkyhq/binky/sdk"
)

// owned is target with an owner.
func owned(admin, slice, owner, label string) sdk.Target {
	t := target(admin, slice)
	t.Owner, t.OwnerLabel = owner, label
	return t
}

// storedClaim reads the claim document of database db straight from the
// server: its claim field, or "" when there is no document.
func storedClaim(t *testing.T, c *mongo.Client, db string) string {
	t.Helper()
	var doc bson.M
	err := c.Database(db).Collection(ownerColl).FindOne(t.Context(), bson.D{{Key: "_id", Value: ownerID}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ""
	}
	if err != nil {
		t.Fatalf("read %s.%s: %v", db, ownerColl, err)
	}
	s, _ := doc["claim"].(string)
	return s
}

func cleanupDB(t *testing.T, admin, slice string) {
	t.Cleanup(func() {
		New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice)})
	})
}

// TestClaim on the real server: provision records the owner's claim as the
// one document of the database's _binky_owner collection; another owner's
// provision, resolve, destroy and clone (from it or into it) are refused
// with code conflict, naming the owning home, and leave the data and the
// claim as they were; the owner still resolves and destroys it, and the
// database goes with its claim.
func TestClaim(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	c := client(t, admin)
	a := New()
	defer a.Close()
	s := testSlice("claim")
	cleanupDB(t, admin, s)
	mine := owned(admin, s, "home-a", "/home/a/.binky (alice)")
	theirs := owned(admin, s, "home-b", "/home/b/.binky (bob)")

	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("provision by its owner: %v", err)
	}
	if got := storedClaim(t, c, s); got != mine.Claim() {
		t.Fatalf("claim stored in %s.%s = %q; want %q", s, ownerColl, got, mine.Claim())
	}
	if dbs, _ := c.ListDatabaseNames(ctx, bson.D{}); !slices.Contains(dbs, s) {
		t.Errorf("database %s is not listed after a provision with an owner; the claim should have made it", s)
	}
	if _, err := c.Database(s).Collection("items").InsertOne(ctx, bson.D{{Key: "note", Value: "alice's"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("provision by its owner again: %v", err)
	}

	refused := func(what string, err error) {
		t.Helper()
		if sdk.CodeOf(err) != sdk.CodeConflict {
			t.Errorf("%s by another owner: %v; want code conflict", what, err)
			return
		}
		if msg := err.Error(); !strings.Contains(msg, "home-a") || !strings.Contains(msg, "alice") || !strings.Contains(msg, s) {
			t.Errorf("%s by another owner: %q; want it to name the database and the owning home", what, msg)
		}
	}
	b := New()
	defer b.Close()
	_, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
	refused("provision", err)
	_, err = b.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: theirs})
	refused("resolve", err)
	_, err = b.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
	refused("destroy", err)

	// Clone from it into a slice of the other home's, and into it from a
	// slice of the other home's: both refused before anything is read or
	// dropped (FerretDB's unsupported comes after the claims).
	other := testSlice("other")
	cleanupDB(t, admin, other)
	otherT := owned(admin, other, "home-b", "/home/b/.binky (bob)")
	if _, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: otherT}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: otherT, Source: s})
	refused("clone from it", err)
	_, err = b.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: theirs, Source: other})
	refused("clone into it", err)

	if n, err := c.Database(s).Collection("items").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("after the refusals %s.items holds %d documents (%v); want 1", s, n, err)
	}
	if got := storedClaim(t, c, s); got != mine.Claim() {
		t.Errorf("after the refusals the claim reads %q; want %q", got, mine.Claim())
	}
	if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
		t.Errorf("resolve by its owner: %v", err)
	}
	// An older host (no owner) is not checked: it resolves as it used to.
	if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, s)}); err != nil {
		t.Errorf("resolve with no owner: %v", err)
	}

	for range 2 {
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
			t.Fatalf("destroy by its owner: %v", err)
		}
	}
	if dbs, _ := c.ListDatabaseNames(ctx, bson.D{}); slices.Contains(dbs, s) {
		t.Errorf("database %s survives its owner's destroy", s)
	}
	// Gone, it is nobody's: the other home may make it now.
	if _, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); err != nil {
		t.Errorf("provision by another home after the owner destroyed it: %v", err)
	}
	if got := storedClaim(t, c, s); got != theirs.Claim() {
		t.Errorf("claim after the other home made it again = %q; want %q", got, theirs.Claim())
	}
}

// TestClaimAdopt: a database an older host made (no claim, data in it)
// is adopted by the first owner that provisions it, keeping its data, and
// then refused to others; a claim document that holds no claim (written by
// hand) is replaced the same way; and of two homes provisioning a new
// database at once exactly one gets it.
func TestClaimAdopt(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	c := client(t, admin)
	a := New()
	defer a.Close()

	legacy := testSlice("legacy")
	cleanupDB(t, admin, legacy)
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, legacy)}); err != nil {
		t.Fatal(err)
	}
	if got := storedClaim(t, c, legacy); got != "" {
		t.Fatalf("provision with no owner recorded %q; want nothing", got)
	}
	if _, err := c.Database(legacy).Collection("items").InsertOne(ctx, bson.D{{Key: "note", Value: "old"}}); err != nil {
		t.Fatal(err)
	}
	mine := owned(admin, legacy, "home-a", "alice")
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	if got := storedClaim(t, c, legacy); got != mine.Claim() {
		t.Errorf("claim after adoption = %q; want %q", got, mine.Claim())
	}
	if n, _ := c.Database(legacy).Collection("items").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("adoption left %d documents; want the 1 there was", n)
	}
	_, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, legacy, "home-b", "bob")})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("provision by another home after adoption: %v; want code conflict", err)
	}

	junk := testSlice("junk")
	cleanupDB(t, admin, junk)
	if _, err := c.Database(junk).Collection(ownerColl).InsertOne(ctx, bson.D{{Key: "_id", Value: ownerID}, {Key: "note", Value: "written by hand"}}); err != nil {
		t.Fatal(err)
	}
	jt := owned(admin, junk, "home-a", "alice")
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: jt}); err != nil {
		t.Fatalf("provision over a claim document holding no claim: %v", err)
	}
	if got := storedClaim(t, c, junk); got != jt.Claim() {
		t.Errorf("claim after replacing a document holding none = %q; want %q", got, jt.Claim())
	}

	race := testSlice("race")
	cleanupDB(t, admin, race)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, owner := range []string{"home-a", "home-b"} {
		wg.Go(func() {
			m := New()
			defer m.Close()
			_, errs[i] = m.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, race, owner, owner)})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won = i + 1
		case sdk.CodeOf(err) != sdk.CodeConflict:
			t.Errorf("racing provision %d: %v; want success or code conflict", i+1, err)
		}
	}
	if won == 0 || errs[0] == nil && errs[1] == nil {
		t.Fatalf("two homes provisioning %s at once: errors %v; want exactly one to succeed", race, errs)
	}
	if got, _ := sdk.ClaimOwner(storedClaim(t, c, race)); got != []string{"home-a", "home-b"}[won-1] {
		t.Errorf("the race's claim names %q; want the winner, home %d", got, won)
	}
}

// TestCloneClaim: on MongoDB 4.4+ the clone carries the cloning owner's
// claim, not the source's (the source's _binky_owner is not copied); on
// FerretDB, which cannot clone, the claims are checked and clone answers
// unsupported without touching the target.
func TestCloneClaim(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	c := client(t, admin)
	a := New()
	defer a.Close()
	src, dst := testSlice("src"), testSlice("dst")
	cleanupDB(t, admin, src)
	cleanupDB(t, admin, dst)
	srcT := owned(admin, src, "home-a", "made in the old checkout")
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: srcT}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Database(src).Collection("items").InsertOne(ctx, bson.D{{Key: "note", Value: "template"}}); err != nil {
		t.Fatal(err)
	}
	dstT := owned(admin, dst, "home-a", "the new checkout")
	_, err := a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: dstT, Source: src})
	if isFerret(t, c) {
		if sdk.CodeOf(err) != sdk.CodeUnsupported {
			t.Fatalf("clone on FerretDB: %v; want code unsupported", err)
		}
		if dbs, _ := c.ListDatabaseNames(ctx, bson.D{}); slices.Contains(dbs, dst) {
			t.Errorf("an unsupported clone made database %s", dst)
		}
		return
	}
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if got := storedClaim(t, c, dst); got != dstT.Claim() {
		t.Errorf("the clone's claim = %q; want the cloning target's %q, not the source's %q", got, dstT.Claim(), srcT.Claim())
	}
	if n, _ := c.Database(dst).Collection(ownerColl).CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("the clone's %s holds %d documents; want 1", ownerColl, n)
	}
	if n, _ := c.Database(dst).Collection("items").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("the clone holds %d items; want 1", n)
	}
}
