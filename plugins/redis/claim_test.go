package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// owned is target with an owner (a binky home) and its label.
func owned(admin, slice, owner string, cfg map[string]any) sdk.Target {
	t := target(admin, slice, cfg)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// claimOf reads the claim key of slice with the admin client on database 0.
func claimOf(t *testing.T, c *goredis.Client, slice string) string {
	t.Helper()
	v, err := c.Get(t.Context(), claimKeyPrefix+slice).Result()
	if errors.Is(err, goredis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("read the claim of %s: %v", slice, err)
	}
	return v
}

func wantConflict(t *testing.T, what string, err error) {
	t.Helper()
	if code := sdk.CodeOf(err); err == nil || code != sdk.CodeConflict {
		t.Fatalf("%s: got %v (code %s); want code conflict", what, err, code)
	}
}

// TestClaimOutsideTheSlice: provision records the owner's claim in
// binky:claim:<slice> on database 0 (also when the admin URL names
// another database), and the slice's own user can neither read, overwrite
// nor delete it.
func TestClaimOutsideTheSlice(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		ac := client(t, admin)
		for _, url := range []string{admin, admin3URL(admin)} {
			a := New()
			s := testSlice(t, "claim")
			tg := owned(url, s, "home-a", nil)
			cleanupSlice(t, admin, s)
			if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tg}); err != nil {
				t.Fatalf("provision %s on %s: %v", s, url, err)
			}
			if got := claimOf(t, ac, s); got != tg.Claim() {
				t.Errorf("admin %s: claim of %s on database 0 = %q; want %q", url, s, got, tg.Claim())
			}
			res, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: tg})
			if err != nil {
				t.Fatalf("resolve %s: %v", s, err)
			}
			uc := client(t, res.Address)
			key := claimKeyPrefix + s
			for what, err := range map[string]error{
				"GET the claim": uc.Get(ctx, key).Err(),
				"SET the claim": uc.Set(ctx, key, "binky-owner:forged", 0).Err(),
				"DEL the claim": uc.Del(ctx, key).Err(),
			} {
				if !isNoPerm(err) {
					t.Errorf("the slice user's %s: %v; want NOPERM", what, err)
				}
			}
			if got := claimOf(t, ac, s); got != tg.Claim() {
				t.Errorf("claim after the slice user's attempts = %q; want %q", got, tg.Claim())
			}
		}
	})
}

// TestRefusedCallsLeaveTheSlice: another home's provision, resolve and
// destroy are refused with code conflict naming the owner, and leave the
// keys (in every database), the ACL user and its password, and the claim
// as they were.
func TestRefusedCallsLeaveTheSlice(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		s := testSlice(t, "keep")
		mine, theirs := owned(admin, s, "home-a", nil), owned(admin, s, "home-b", nil)
		cleanupSlice(t, admin, s)
		if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
			t.Fatal(err)
		}
		res, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: mine})
		if err != nil {
			t.Fatal(err)
		}
		prefix := names.RedisPrefix(s)
		ac, other := client(t, admin), admin3(t, admin)
		if err := client(t, res.Address).Set(ctx, prefix+"data", "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		if err := other.Set(ctx, prefix+"in-db-3", "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Del(context.Background(), prefix+"in-db-3") })

		b := New() // another home's adapter process
		_, err = b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
		wantConflict(t, "another home's provision", err)
		if msg := err.Error(); !strings.Contains(msg, "home-a") || !strings.Contains(msg, "home of home-a") || !strings.Contains(msg, prefix) {
			t.Errorf("refusal %q; want it to name the owning home, its label and the prefix %s", msg, prefix)
		}
		_, err = b.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: theirs})
		wantConflict(t, "another home's resolve", err)
		_, err = b.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
		wantConflict(t, "another home's destroy", err)

		if n, err := ac.Exists(ctx, prefix+"data").Result(); err != nil || n != 1 {
			t.Errorf("the slice's key after the refusals: exists %d, %v; want it kept", n, err)
		}
		if n, err := other.Exists(ctx, prefix+"in-db-3").Result(); err != nil || n != 1 {
			t.Errorf("the slice's key in database 3 after the refusals: exists %d, %v; want it kept", n, err)
		}
		users, err := ac.ACLUsers(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(users, s) {
			t.Errorf("ACL user %s is gone after the refusals", s)
		}
		if err := client(t, res.Address).Ping(ctx).Err(); err != nil {
			t.Errorf("the owner's address after the refusals: PING %v; want PONG", err)
		}
		if got := claimOf(t, ac, s); got != mine.Claim() {
			t.Errorf("claim after the refusals = %q; want %q", got, mine.Claim())
		}

		// The owner destroys it, claim and all; then the name is free.
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
			t.Fatalf("the owner's destroy: %v", err)
		}
		if got := claimOf(t, ac, s); got != "" {
			t.Errorf("claim after the owner's destroy = %q; want none", got)
		}
		if _, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); err != nil {
			t.Fatalf("another home's provision after the owner destroyed the slice: %v", err)
		}
		if got := claimOf(t, ac, s); got != theirs.Claim() {
			t.Errorf("claim of the re-made slice = %q; want %q", got, theirs.Claim())
		}
	})
}

// TestAdoption: a slice with keys and an ACL user but no claim (what an
// older host left), or with keys alone, or with something that is not a
// claim in the claim key, is adopted by the first home that provisions it,
// keeping its keys, and refused to the next.
func TestAdoption(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		ac := client(t, admin)
		for _, tc := range []struct {
			name  string
			setup func(t *testing.T, a *Redis, s string)
		}{
			{"legacy provision", func(t *testing.T, a *Redis, s string) {
				if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
					t.Fatal(err)
				}
			}},
			{"keys only", func(*testing.T, *Redis, string) {}},
			{"not a claim", func(t *testing.T, _ *Redis, s string) {
				if err := ac.Set(ctx, claimKeyPrefix+s, "written by hand", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := New()
				s := testSlice(t, "old")
				cleanupSlice(t, admin, s)
				tc.setup(t, a, s)
				if tc.name != "not a claim" {
					if got := claimOf(t, ac, s); got != "" {
						t.Fatalf("claim before adoption = %q; want none", got)
					}
				}
				key := names.RedisPrefix(s) + "data"
				if err := ac.Set(ctx, key, "v", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
				mine := owned(admin, s, "home-a", nil)
				if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
					t.Fatalf("adopt %s: %v", s, err)
				}
				if got := claimOf(t, ac, s); got != mine.Claim() {
					t.Errorf("claim after adoption = %q; want %q", got, mine.Claim())
				}
				if v, err := ac.Get(ctx, key).Result(); err != nil || v != "v" {
					t.Errorf("the slice's key after adoption = %q, %v; want it kept", v, err)
				}
				_, err := New().Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "home-b", nil)})
				wantConflict(t, "another home's provision after adoption", err)
			})
		}
	})
}

// TestNoOwner: a request without an owner (a host that predates claims)
// records no claim and is refused nothing, and its destroy removes the
// claim with the slice.
func TestNoOwner(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		ac := client(t, admin)
		a := New()
		s := testSlice(t, "noowner")
		provisionT(t, a, admin, s, nil)
		if got := claimOf(t, ac, s); got != "" {
			t.Errorf("claim recorded for a request without an owner: %q", got)
		}
		if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "home-a", nil)}); err != nil {
			t.Fatal(err)
		}
		resolveT(t, a, admin, s, nil)
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
			t.Fatalf("destroy without an owner: %v", err)
		}
		if got := claimOf(t, ac, s); got != "" {
			t.Errorf("claim after destroy = %q; want none", got)
		}
	})
}

// TestOwnLabelRefreshed: the owner's provision with a new label (the home
// moved) rewrites the claim; the owner id alone decides.
func TestOwnLabelRefreshed(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		ctx := t.Context()
		a := New()
		s := testSlice(t, "label")
		cleanupSlice(t, admin, s)
		tg := owned(admin, s, "home-a", map[string]any{KeyACL: false})
		if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tg}); err != nil {
			t.Fatal(err)
		}
		tg.OwnerLabel = "moved elsewhere"
		if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tg}); err != nil {
			t.Fatalf("provision by the same owner with a new label: %v", err)
		}
		if got := claimOf(t, client(t, admin), s); got != tg.Claim() {
			t.Errorf("claim = %q; want %q", got, tg.Claim())
		}
	})
}

// admin3URL is admin with logical database 3.
func admin3URL(admin string) string {
	u, _ := url.Parse(admin)
	u.Path = "/3"
	return u.String()
}

// TestClaimRace: of several homes provisioning the same new slice at once,
// exactly one gets it; the others are refused, whatever the interleaving.
func TestClaimRace(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		s := testSlice(t, "race")
		cleanupSlice(t, admin, s)
		const homes = 8
		errs := make([]error, homes)
		var wg sync.WaitGroup
		for i := range homes {
			wg.Go(func() {
				tg := owned(admin, s, fmt.Sprintf("home-%d", i), map[string]any{KeyACL: false})
				_, errs[i] = New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: tg})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("homes %d and %d both provisioned the slice", winner, i)
			case err == nil:
				winner = i
			case sdk.CodeOf(err) != sdk.CodeConflict:
				t.Errorf("home %d: %v; want ok or code conflict", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no home provisioned the slice")
		}
		want := owned(admin, s, fmt.Sprintf("home-%d", winner), nil).Claim()
		if got := claimOf(t, client(t, admin), s); got != want {
			t.Errorf("claim = %q; want the winner's %q", got, want)
		}
	})
}
