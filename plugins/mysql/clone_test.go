package mysqladapter

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
)

// seedSchema builds, in db, a schema using what clone must carry: a
// foreign key, an AUTO_INCREMENT counter ahead of the rows, a generated
// column, odd table names, a function, a procedure, a view over a view
// over the function, and a trigger writing to another table.
func seedSchema(t *testing.T, db *sql.DB, rows int) {
	t.Helper()
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{
		"CREATE TABLE parent (id int PRIMARY KEY, name varchar(40) NOT NULL)",
		"CREATE TABLE child (id int AUTO_INCREMENT PRIMARY KEY, parent_id int NOT NULL, qty int NOT NULL, " +
			"double_qty int AS (qty * 2) VIRTUAL, " +
			"CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE) AUTO_INCREMENT = 5000",
		"CREATE TABLE `we``ird name` (k varchar(10) PRIMARY KEY)",
		"CREATE TABLE `ÄÖ spaced` (k int)",
		"CREATE TABLE audit (id int AUTO_INCREMENT PRIMARY KEY, note varchar(80))",
		"CREATE FUNCTION twice(x int) RETURNS int DETERMINISTIC RETURN x * 2",
		"CREATE PROCEDURE add_parent(IN i int, IN n varchar(40)) INSERT INTO parent VALUES (i, n)",
		"CREATE VIEW parent_names AS SELECT id, name, twice(id) AS twice_id FROM parent",
		"CREATE VIEW parent_names_upper AS SELECT id, UPPER(name) AS name FROM parent_names",
		"CREATE TRIGGER child_audit AFTER INSERT ON child FOR EACH ROW INSERT INTO audit (note) VALUES (CONCAT('child ', NEW.id))",
	} {
		exec1(t, conn, s)
	}
	for i := 1; i <= rows; i++ {
		exec1(t, conn, "INSERT INTO parent VALUES (?, ?)", i, fmt.Sprintf("parent %d", i))
	}
	exec1(t, conn, "INSERT INTO child (id, parent_id, qty) SELECT id, id, id FROM parent")
	exec1(t, conn, "INSERT INTO `we``ird name` VALUES ('a'), ('b')")
	exec1(t, conn, "DELETE FROM audit")
}

// TestCloneCopiesEverything: the clone has the tables, rows, foreign key
// (pointing inside the clone), counter, generated column, views, routines
// and trigger, all acting on the clone; the source is untouched.
func TestCloneCopiesEverything(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	cleanupSlice(t, admin, dst)
	sdb := sliceDB(t, a, admin, src)
	seedSchema(t, sdb, 50)

	start := time.Now()
	resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	t.Logf("clone of a 50-row schema took %v by %s", time.Since(start), resp.Method)
	if resp.Method != MethodTableCopy {
		t.Errorf("method %q; want %q", resp.Method, MethodTableCopy)
	}
	if resp.SourceBytes <= 0 { // issue 40: golden list showed no size
		t.Errorf("source_bytes %d; want the template's size", resp.SourceBytes)
	}
	ddb := sliceDB(t, a, admin, dst)
	for _, c := range []struct {
		query string
		want  int
	}{
		{"SELECT count(*) FROM parent", 50},
		{"SELECT count(*) FROM child", 50},
		{"SELECT sum(double_qty) FROM child", 2 * 50 * 51 / 2},
		{"SELECT count(*) FROM `we``ird name`", 2},
		{"SELECT count(*) FROM `ÄÖ spaced`", 0},
		{"SELECT count(*) FROM parent_names_upper WHERE name = 'PARENT 7'", 1},
		{"SELECT twice_id FROM parent_names WHERE id = 21", 42},
		{"SELECT count(*) FROM audit", 0},
	} {
		if got := count(t, ddb, c.query); got != c.want {
			t.Errorf("clone: %s = %d; want %d", c.query, got, c.want)
		}
	}
	adb := adminDB(t, admin)
	var refSchema string
	if err := adb.QueryRowContext(t.Context(),
		"SELECT REFERENCED_TABLE_SCHEMA FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ? AND CONSTRAINT_NAME = 'child_parent'", dst).Scan(&refSchema); err != nil {
		t.Fatalf("the clone's foreign key child_parent: %v", err)
	}
	if refSchema != dst {
		t.Errorf("the clone's foreign key references schema %q; want %q", refSchema, dst)
	}

	// The trigger, procedure and counter act on the clone alone.
	exec1(t, ddb, "CALL add_parent(1000, 'from clone')")
	res, err := ddb.ExecContext(t.Context(), "INSERT INTO child (parent_id, qty) VALUES (1000, 1)")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 5000 {
		t.Errorf("next AUTO_INCREMENT id in the clone %d; want 5000 (the counter was copied)", id)
	}
	if got := count(t, ddb, "SELECT count(*) FROM audit"); got != 1 {
		t.Errorf("clone's audit has %d rows after an insert; want 1 (the trigger fires in the clone)", got)
	}
	for q, want := range map[string]int{"SELECT count(*) FROM audit": 0, "SELECT count(*) FROM parent": 50} {
		if got := count(t, sdb, q); got != want {
			t.Errorf("source: %s = %d after writes to the clone; want %d", q, got, want)
		}
	}
	// The foreign key is enforced in the clone.
	if _, err := ddb.ExecContext(t.Context(), "INSERT INTO child (parent_id, qty) VALUES (99999, 1)"); err == nil {
		t.Error("the clone accepted a child without a parent; want the foreign key enforced")
	}
}

// TestCloneReplacesExisting: cloning onto a slice that exists replaces it.
func TestCloneReplacesExisting(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	provisionT(t, a, admin, dst, nil)
	exec1(t, sliceDB(t, a, admin, src), "CREATE TABLE fresh (x int)")
	exec1(t, sliceDB(t, a, admin, dst), "CREATE TABLE stale (x int)")
	if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src}); err != nil {
		t.Fatalf("clone: %v", err)
	}
	adb := adminDB(t, admin)
	if got := count(t, adb, "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", dst); got != 1 {
		t.Errorf("the clone has %d tables; want 1 (only the source's)", got)
	}
}

// TestCloneRefusals: a missing source is invalid; a source with an event
// is unsupported and leaves no half-made slice.
func TestCloneRefusals(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	cleanupSlice(t, admin, dst)
	_, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if got := sdk.CodeOf(err); got != sdk.CodeInvalid {
		t.Errorf("clone from a missing source: code %q; want %q (%v)", got, sdk.CodeInvalid, err)
	}
	provisionT(t, a, admin, src, nil)
	exec1(t, sliceDB(t, a, admin, src), "CREATE EVENT nightly ON SCHEDULE EVERY 1 DAY DISABLE DO SELECT 1")
	_, err = a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src})
	if got := sdk.CodeOf(err); got != sdk.CodeUnsupported {
		t.Errorf("clone of a source with an event: code %q; want %q (%v)", got, sdk.CodeUnsupported, err)
	}
	if _, _, ok, _ := schemaOf(context.Background(), adminDB(t, admin), dst); ok {
		t.Errorf("a refused clone left database %s behind", dst)
	}
}

// BenchmarkClone measures a clone of a 200,000-row table (its size is
// reported in MB); the previous clone is dropped outside the timer.
func BenchmarkClone(b *testing.B) {
	admin := adminFromEnv()
	ctx := context.Background()
	a := New()
	tg := func(s string) sdk.Target { return target(admin, s, nil) }
	src, dst := testSlice(b, "golden"), testSlice(b, "clone") // another run may bench beside this one
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tg(src)}); err != nil {
		b.Skipf("MySQL/MariaDB not usable at %s: %v", admin, err)
	}
	defer func() {
		for _, s := range []string{dst, src} {
			_, _ = a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tg(s)})
		}
	}()
	r, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: tg(src)})
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("mysql", r.Values["dsn"])
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE items (id int AUTO_INCREMENT PRIMARY KEY, name varchar(40) NOT NULL, body text, KEY (name))",
		"INSERT INTO items (name, body) SELECT CONCAT('item ', seq), REPEAT('x', 100) FROM seq_1_to_200000",
		"ANALYZE TABLE items",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Skipf("seed (needs MariaDB's sequence engine): %v", err)
		}
	}
	var size int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", src).Scan(&size); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tg(dst)}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: tg(dst), Source: src}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB") // after the loop, which resets metrics
}
