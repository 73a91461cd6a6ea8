//go:build linux

package postgresadapter

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk/extents"
	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// The copy-on-write clone of PostgreSQL 18 (file_copy_method = clone),
// against a real server: scripts/testenv up pg18 starts one on the reflink
// XFS mount, and CI runs this module's tests a second time with
// BINKY_TEST_POSTGRES_URL pointing at it (make unit-pg18). On an older
// server these tests skip: the run against 18 covers them.

// admin18 is the test server's admin URL when it is PostgreSQL 18 or
// later whose data directory this process can read; the test skips
// otherwise.
func admin18(t *testing.T) string {
	t.Helper()
	admin := testAdminURL(t)
	a := New()
	v, err := a.serverVersion(t.Context(), mustServer(t, a, admin))
	if err != nil {
		t.Fatal(err)
	}
	if v < 180000 {
		t.Skipf("the test server is %d; copy-on-write clones need PostgreSQL 18 (make unit-pg18 runs these against it)", v)
	}
	c := adminConn(t, admin)
	var method string
	if err := c.QueryRow(t.Context(), "SHOW file_copy_method").Scan(&method); err != nil {
		t.Fatal(err)
	}
	var dir string
	if err := c.QueryRow(t.Context(), "SHOW data_directory").Scan(&dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/global/pg_control"); err != nil {
		adaptertest.MissingServer(t, fmt.Sprintf("the PostgreSQL 18 server's data directory %s is not readable here (%v); run the tests on its machine as a user who can read it", dir, err))
	}
	return admin
}

// seedBytes fills the database at url with about mb megabytes of rows
// (incompressible text, so TOAST does not shrink it) and an index.
func seedBytes(t testing.TB, url string, mb int) {
	t.Helper()
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(t.Context())
	rows := mb * 1 << 20 / 300 // a row is about 300 bytes on disk with its index entry
	for _, q := range []string{
		"CREATE TABLE items (id bigint PRIMARY KEY, body text NOT NULL)",
		fmt.Sprintf("INSERT INTO items SELECT g, md5(g::text) || md5((g+1)::text) || md5((g+2)::text) || md5((g+3)::text) || md5((g+4)::text) || md5((g+5)::text) || md5((g+6)::text) FROM generate_series(1, %d) g", rows),
	} {
		if _, err := c.Exec(t.Context(), q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
}

// dbDir is the directory of the slice's database in the server's data
// directory.
func dbDir(t testing.TB, a *Postgres, admin, slice string) string {
	t.Helper()
	s := mustServer(t.(*testing.T), a, admin)
	dir, why := databaseDir(t.Context(), s.pool, slice)
	if dir == "" {
		t.Fatalf("the directory of %s: %s", slice, why)
	}
	return dir
}

func sharedShare(t *testing.T, dir string) (float64, int64) {
	t.Helper()
	mapped, shared, err := extents.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mapped == 0 {
		t.Fatalf("%s maps no blocks", dir)
	}
	return float64(shared) / float64(mapped), mapped
}

// TestClone18CopyOnWrite: on the reflink mount a clone shares the
// template's blocks and says so; reading the whole clone (after the
// freeze the adapter does) rewrites no page; a write in the clone leaves
// the template unchanged.
func TestClone18CopyOnWrite(t *testing.T) {
	admin := admin18(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	cleanupSlice(t, a, admin, dst)
	srcURL := resolveT(t, a, admin, src, nil).Address
	seedBytes(t, srcURL, 24)

	resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if resp.Method != MethodCopyOnWrite {
		t.Fatalf("method %q; want %q on the reflink mount", resp.Method, MethodCopyOnWrite)
	}
	dir := dbDir(t, a, admin, dst)
	if f, mapped := sharedShare(t, dir); f < 0.9 {
		t.Errorf("%.0f%% of the clone's %d bytes are shared; want at least 90%%", f*100, mapped)
	}

	// A full read, then a checkpoint so whatever it dirtied is on disk.
	cc := connect(t, resolveT(t, a, admin, dst, nil).Address)
	rows := count(t, cc, "SELECT count(*) FROM items WHERE body <> ''")
	ac := adminConn(t, admin)
	exec1(t, ac, "CHECKPOINT")
	if f, mapped := sharedShare(t, dir); f < 0.9 {
		t.Errorf("after a full read %.0f%% of the clone's %d bytes are shared; want at least 90%% (was the template frozen?)", f*100, mapped)
	}

	exec1(t, cc, "UPDATE items SET body = 'changed' WHERE id <= 1000")
	exec1(t, cc, "INSERT INTO items VALUES (-1, 'new')")
	sc := connect(t, srcURL)
	if got := count(t, sc, "SELECT count(*) FROM items WHERE body = 'changed' OR id = -1"); got != 0 {
		t.Errorf("the template has %d rows written in the clone; want 0", got)
	}
	if got := count(t, sc, "SELECT count(*) FROM items"); got != rows {
		t.Errorf("the template has %d rows; want %d", got, rows)
	}
}

// TestClone18NoReflink: the same server, the template in a tablespace off
// the reflink mount (binky_plain, made by scripts/testenv): the server
// copies the bytes, and the adapter reports a copy, not a clone.
func TestClone18NoReflink(t *testing.T) {
	admin := admin18(t)
	ac := adminConn(t, admin)
	if count(t, ac, "SELECT count(*) FROM pg_tablespace WHERE spcname = 'binky_plain'") == 0 {
		adaptertest.MissingServer(t, "no tablespace binky_plain on the PostgreSQL 18 server (scripts/testenv up pg18 makes it)")
	}
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	cleanupSlice(t, a, admin, dst)
	// Moving files across filesystems cannot clone them.
	exec1(t, ac, "SET file_copy_method = copy")
	exec1(t, ac, "ALTER DATABASE "+ident(src)+" SET TABLESPACE binky_plain")
	seedBytes(t, resolveT(t, a, admin, src, nil).Address, 4)

	resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if resp.Method != MethodCopied {
		t.Fatalf("method %q; want %q off the reflink mount", resp.Method, MethodCopied)
	}
	if f, _ := sharedShare(t, dbDir(t, a, admin, dst)); f != 0 {
		t.Errorf("%.0f%% of the copy's bytes are shared; want none", f*100)
	}
	cc := connect(t, resolveT(t, a, admin, dst, nil).Address)
	if got := count(t, cc, "SELECT count(*) FROM items"); got == 0 {
		t.Error("the copy has no rows")
	}
}

// TestClone18Large: a world cloned from a golden template of 500 MB on
// the reflink mount adds (almost) nothing to the filesystem's used space
// and shares its extents. It loads 500 MB, so it runs under CI=true or
// BINKY_TEST_LARGE=1 only (about a minute on the 2-core CI machine,
// mostly the load).
func TestClone18Large(t *testing.T) {
	if os.Getenv("CI") != "true" && os.Getenv("BINKY_TEST_LARGE") == "" {
		t.Skip("loads a 500 MB template: runs under CI=true or BINKY_TEST_LARGE=1")
	}
	admin := admin18(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	cleanupSlice(t, a, admin, dst)
	seedBytes(t, resolveT(t, a, admin, src, nil).Address, 520)
	ac := adminConn(t, admin)
	var size int64
	if err := ac.QueryRow(t.Context(), "SELECT pg_database_size($1)", src).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if size < 500<<20 {
		t.Fatalf("the template is %d MB; want at least 500", size>>20)
	}
	// Freeze and flush first, so the space measured is the clone's alone.
	if err := freeze(t.Context(), mustServer(t, a, admin).pool, src); err != nil {
		t.Fatal(err)
	}
	exec1(t, ac, "CHECKPOINT")
	dir := dbDir(t, a, admin, src)
	before := usedBytes(t, dir)
	start := time.Now()
	resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	took := time.Since(start)
	after := usedBytes(t, dir)
	t.Logf("clone of %d MB by %s in %v; used space %+d MB", size>>20, resp.Method, took, (after-before)>>20)
	if resp.Method != MethodCopyOnWrite {
		t.Errorf("method %q; want %q", resp.Method, MethodCopyOnWrite)
	}
	if f, mapped := sharedShare(t, dbDir(t, a, admin, dst)); f < 0.9 {
		t.Errorf("%.0f%% of the clone's %d MB are shared; want at least 90%%", f*100, mapped>>20)
	}
	// 5 % of the template: room for the WAL and catalog the clone writes.
	if grew := after - before; grew > size/20 {
		t.Errorf("used space grew %d MB for a clone of %d MB; want under 5%%", grew>>20, size>>20)
	}
}

// usedBytes is the used space of the filesystem holding path.
func usedBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}
