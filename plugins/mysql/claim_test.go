package mysqladapter

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// stores are the two places a claim is kept. MariaDB 10.5+ keeps it as the
// schema comment; the marker table (what Oracle MySQL and Percona get) is
// forced on the same server.
var stores = []struct {
	name string
	st   claimStore
}{
	{"schema_comment", storeComment},
	{"marker_table", storeTable},
}

// adapterWith is an adapter whose server at admin keeps claims in st. The
// server must have schema comments for storeComment.
func adapterWith(t *testing.T, admin string, st claimStore) *MySQL {
	t.Helper()
	a := New()
	srv, err := a.server(admin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.claimStore(t.Context(), srv)
	if err != nil {
		t.Fatalf("look up the claim store: %v", err)
	}
	if st == storeComment && got != storeComment {
		t.Skip("this server has no schema comments (Oracle MySQL, Percona or MariaDB before 10.5)")
	}
	srv.claims = st
	return a
}

// owned is target with an owner: the home "home-<owner>".
func owned(admin, slice, owner string) sdk.Target {
	t := target(admin, slice, nil)
	t.Owner, t.OwnerLabel = "home-"+owner, "/home/"+owner+"/.binky "+owner
	return t
}

// recorded reads the claim database db records in st by plain SQL, and
// checks that the other store holds nothing. "" when none.
func recorded(t *testing.T, adb *sql.DB, st claimStore, db string) string {
	t.Helper()
	var comment string
	if err := adb.QueryRowContext(t.Context(), "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&comment); err != nil {
		t.Fatalf("read the comment of database %s: %v", db, err)
	}
	var marker string
	err := adb.QueryRowContext(t.Context(), "SELECT claim FROM `"+db+"`.`"+claimTable+"`").Scan(&marker)
	if err != nil && !errors.Is(err, sql.ErrNoRows) && errNumber(err) != erNoSuchTable {
		t.Fatalf("read the marker table of database %s: %v", db, err)
	}
	if st == storeComment {
		if err == nil {
			t.Errorf("database %s has a marker table holding %q; want claims only in the schema comment", db, marker)
		}
		return comment
	}
	if comment != "" {
		t.Errorf("database %s has the schema comment %q; want the claim only in the marker table", db, comment)
	}
	return marker
}

func wantConflict(t *testing.T, what string, err error) {
	t.Helper()
	if got := sdk.CodeOf(err); got != sdk.CodeConflict {
		t.Errorf("%s: code %q; want %q (%v)", what, got, sdk.CodeConflict, err)
	}
}

func dbCount(t *testing.T, adb *sql.DB, db string) int {
	t.Helper()
	return count(t, adb, "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db)
}

// TestClaimStoreDetected: MariaDB 10.5+ keeps claims as schema comments,
// every other server in the marker table.
func TestClaimStoreDetected(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	srv, err := a.server(admin)
	if err != nil {
		t.Fatal(err)
	}
	var version string
	if err := srv.db.QueryRowContext(t.Context(), "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	want := storeTable
	if i := strings.Index(version, "-MariaDB"); i > 0 {
		parts := strings.SplitN(version[:i], ".", 3)
		major, _ := strconv.Atoi(parts[0])
		minor := 0
		if len(parts) > 1 {
			minor, _ = strconv.Atoi(parts[1])
		}
		if major > 10 || major == 10 && minor >= 5 {
			want = storeComment
		}
	}
	got, err := a.claimStore(t.Context(), srv)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("server %s: claim store %d; want %d", version, got, want)
	}
}

// TestClaimRecorded: provision records the owner's claim, a later
// provision by the same owner refreshes its label, and a host without an
// owner records nothing.
func TestClaimRecorded(t *testing.T) {
	admin := testAdminURL(t)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			a := adapterWith(t, admin, tc.st)
			adb := adminDB(t, admin)
			s := testSlice(t, "claim")
			cleanupSlice(t, admin, s)
			mine := owned(admin, s, "a")
			if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("provision: %v", err)
			}
			if got := recorded(t, adb, tc.st, s); got != mine.Claim() {
				t.Errorf("claim %q; want %q", got, mine.Claim())
			}
			moved := mine
			moved.OwnerLabel = "/elsewhere/.binky a"
			res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: moved})
			if err != nil {
				t.Fatalf("provision with a new label: %v", err)
			}
			if res.Existed == nil || !*res.Existed {
				t.Errorf("second provision: existed %v; want true", res.Existed)
			}
			if got := recorded(t, adb, tc.st, s); got != moved.Claim() {
				t.Errorf("claim %q after the label changed; want %q", got, moved.Claim())
			}

			legacy := testSlice(t, "legacy")
			provisionT(t, a, admin, legacy, nil)
			if got := recorded(t, adb, tc.st, legacy); got != "" {
				t.Errorf("a slice provisioned without an owner records %q; want nothing", got)
			}
		})
	}
}

// TestClaimRefusalLeavesSliceWhole: another home's provision, resolve and
// destroy are refused with code conflict, and the database, its rows and
// its claim stay as they were.
func TestClaimRefusalLeavesSliceWhole(t *testing.T) {
	admin := testAdminURL(t)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			a := adapterWith(t, admin, tc.st)
			adb := adminDB(t, admin)
			s := testSlice(t, "whole")
			cleanupSlice(t, admin, s)
			mine, theirs := owned(admin, s, "a"), owned(admin, s, "b")
			if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("provision: %v", err)
			}
			sdb := sliceDB(t, a, admin, s)
			exec1(t, sdb, "CREATE TABLE items (id int PRIMARY KEY)")
			exec1(t, sdb, "INSERT INTO items VALUES (1), (2), (3)")

			b := adapterWith(t, admin, tc.st)
			_, err := b.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "provision by another home", err)
			_, err = b.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "resolve by another home", err)
			_, err = b.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "destroy by another home", err)

			if got := recorded(t, adb, tc.st, s); got != mine.Claim() {
				t.Errorf("claim %q after the refusals; want %q", got, mine.Claim())
			}
			if got := count(t, sdb, "SELECT count(*) FROM items"); got != 3 {
				t.Errorf("the slice holds %d rows after the refusals; want 3", got)
			}
			if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("destroy by the owner: %v", err)
			}
			if got := dbCount(t, adb, s); got != 0 {
				t.Errorf("the owner's destroy left the database")
			}
			// Gone is gone for everybody: destroy stays idempotent.
			if _, err := b.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs}); err != nil {
				t.Errorf("destroy of a slice that is gone, by another home: %v", err)
			}
		})
	}
}

// TestClaimAdoptsUnclaimed: a database made by hand is adopted by the
// first owner that provisions it, keeping its data, and then refused to
// another; resolve checks but does not adopt.
func TestClaimAdoptsUnclaimed(t *testing.T) {
	admin := testAdminURL(t)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			a := adapterWith(t, admin, tc.st)
			adb := adminDB(t, admin)
			s := testSlice(t, "adopt")
			cleanupSlice(t, admin, s)
			exec1(t, adb, "CREATE DATABASE `"+s+"`")
			exec1(t, adb, "CREATE TABLE `"+s+"`.items (id int PRIMARY KEY)")
			exec1(t, adb, "INSERT INTO `"+s+"`.items VALUES (1), (2)")
			before := ""
			if tc.st == storeComment {
				before = "made by hand"
				exec1(t, adb, "ALTER DATABASE `"+s+"` COMMENT = 'made by hand'")
			}

			mine := owned(admin, s, "a")
			if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("resolve of an unclaimed slice: %v", err)
			}
			if got := recorded(t, adb, tc.st, s); got != before {
				t.Errorf("resolve recorded %q; want %q left as it was", got, before)
			}
			res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
			if err != nil {
				t.Fatalf("adopt: %v", err)
			}
			if res.Existed == nil || !*res.Existed {
				t.Errorf("adopt: existed %v; want true", res.Existed)
			}
			if got := recorded(t, adb, tc.st, s); got != mine.Claim() {
				t.Errorf("claim %q after adoption; want %q", got, mine.Claim())
			}
			if got := count(t, adb, "SELECT count(*) FROM `"+s+"`.items"); got != 2 {
				t.Errorf("the adopted slice holds %d rows; want 2", got)
			}
			_, err = a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "b")})
			wantConflict(t, "provision by another home after adoption", err)
		})
	}
}

// TestCloneClaims: the clone records the cloning owner's claim, not the
// source's; another home may neither clone an owner's slice nor clone into
// one, and a refused clone leaves the target whole. A clone without an
// owner records nothing, and copies no marker table.
func TestCloneClaims(t *testing.T) {
	admin := testAdminURL(t)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			a := adapterWith(t, admin, tc.st)
			adb := adminDB(t, admin)
			src, dst, theirSrc := testSlice(t, "golden"), testSlice(t, "clone"), testSlice(t, "theirs")
			for _, s := range []string{src, dst, theirSrc} {
				cleanupSlice(t, admin, s)
			}
			golden := owned(admin, src, "a")
			golden.OwnerLabel = "the golden's label"
			if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: golden}); err != nil {
				t.Fatalf("provision the source: %v", err)
			}
			sdb := sliceDB(t, a, admin, src)
			exec1(t, sdb, "CREATE TABLE items (id int PRIMARY KEY)")
			exec1(t, sdb, "INSERT INTO items VALUES (1), (2), (3)")

			mine := owned(admin, dst, "a")
			if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: mine, Source: src}); err != nil {
				t.Fatalf("clone: %v", err)
			}
			if got := recorded(t, adb, tc.st, dst); got != mine.Claim() || got == golden.Claim() {
				t.Errorf("the clone records %q; want its own claim %q (the source's is %q)", got, mine.Claim(), golden.Claim())
			}
			if got := recorded(t, adb, tc.st, src); got != golden.Claim() {
				t.Errorf("the source's claim became %q; want %q", got, golden.Claim())
			}
			if tc.st == storeTable {
				if got := count(t, adb, "SELECT count(*) FROM `"+dst+"`.`"+claimTable+"`"); got != 1 {
					t.Errorf("the clone's marker table has %d rows; want 1", got)
				}
			}
			if got := count(t, adb, "SELECT count(*) FROM `"+dst+"`.items"); got != 3 {
				t.Errorf("the clone holds %d rows; want 3", got)
			}

			// Another home reading the golden by cloning it.
			b := adapterWith(t, admin, tc.st)
			into := owned(admin, theirSrc, "b")
			_, err := b.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: into, Source: src})
			wantConflict(t, "clone of another home's slice", err)
			if got := dbCount(t, adb, theirSrc); got != 0 {
				t.Errorf("a refused clone made the database %s", theirSrc)
			}
			// Another home replacing the owner's slice by cloning into it.
			if _, err := b.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: into}); err != nil {
				t.Fatalf("provision another home's source: %v", err)
			}
			_, err = b.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: owned(admin, dst, "b"), Source: theirSrc})
			wantConflict(t, "clone into another home's slice", err)
			if got := recorded(t, adb, tc.st, dst); got != mine.Claim() {
				t.Errorf("the clone records %q after a refused clone into it; want %q", got, mine.Claim())
			}
			if got := count(t, adb, "SELECT count(*) FROM `"+dst+"`.items"); got != 3 {
				t.Errorf("the clone holds %d rows after a refused clone into it; want 3", got)
			}

			// An older host's clone records nothing and copies no claim.
			if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src}); err != nil {
				t.Fatalf("clone without an owner: %v", err)
			}
			if got := recorded(t, adb, tc.st, dst); got != "" {
				t.Errorf("a clone made without an owner records %q; want nothing", got)
			}
		})
	}
}

// TestClaimRace: two homes provisioning one new slice at once; exactly
// one gets it, the other is refused, whatever the order.
func TestClaimRace(t *testing.T) {
	admin := testAdminURL(t)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			adb := adminDB(t, admin)
			for round := range 4 {
				s := testSlice(t, fmt.Sprintf("race%d", round))
				cleanupSlice(t, admin, s)
				adapters := []*MySQL{adapterWith(t, admin, tc.st), adapterWith(t, admin, tc.st)}
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, who := range []string{"a", "b"} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[i] = adapters[i].Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, who)})
					}()
				}
				wg.Wait()
				won := 0
				for i, err := range errs {
					switch {
					case err == nil:
						won++
					case sdk.CodeOf(err) != sdk.CodeConflict:
						t.Errorf("round %d, home %d: %v; want success or conflict", round, i, err)
					}
				}
				if won != 1 {
					t.Errorf("round %d: %d homes got the slice; want exactly 1 (%v)", round, won, errs)
				}
				got := recorded(t, adb, tc.st, s)
				if got != owned(admin, s, "a").Claim() && got != owned(admin, s, "b").Claim() {
					t.Errorf("round %d: claim %q; want one home's", round, got)
				}
			}
		})
	}
}

func TestQuoteString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{"binky-owner:abc /home/x/.binky x@y", "'binky-owner:abc /home/x/.binky x@y'", false},
		{"it's", "'it''s'", false},
		{"", "''", false},
		{`back\slash`, "", true},
		{"nul\x00", "", true},
		{"bad\xff", "", true},
	} {
		got, err := quoteString(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("quoteString(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
