package postgresadapter

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
)

// seed builds a small schema with rows, a sequence, an index and a view
// in the database at url.
func seed(t *testing.T, url string, rows int) {
	t.Helper()
	c := connect(t, url)
	exec1(t, c, "CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL)")
	exec1(t, c, "CREATE INDEX items_name ON items (name)")
	exec1(t, c, "INSERT INTO items (name) SELECT 'item ' || g FROM generate_series(1, $1) g", rows)
	exec1(t, c, "CREATE VIEW item_names AS SELECT name FROM items")
	if err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestCloneCopiesSchemaAndRows: the clone holds the source's tables, rows,
// sequence position and view, and the two diverge afterwards. A client
// still connected to the source does not stop the clone.
func TestCloneCopiesSchemaAndRows(t *testing.T) {
	admin := testAdminURL(t)
	for _, strategy := range []string{StrategyAuto, StrategyFileCopy} {
		t.Run(strategy, func(t *testing.T) {
			a := New()
			cfg := map[string]any{KeyCloneStrategy: strategy}
			src, dst := testSlice(t, "golden"), testSlice(t, "clone")
			provisionT(t, a, admin, src, cfg)
			cleanupSlice(t, a, admin, dst)
			srcURL := resolveT(t, a, admin, src, cfg).Address
			seed(t, srcURL, 1000)
			straggler := connect(t, srcURL) // terminated by the clone

			start := time.Now()
			resp, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, cfg), Source: src})
			if err != nil {
				t.Fatalf("clone: %v", err)
			}
			t.Logf("clone of 1000 rows took %v by %s", time.Since(start), resp.Method)
			v, _ := a.serverVersion(t.Context(), mustServer(t, a, admin))
			_, want, _ := pickStrategy(strategy, v)
			if want == MethodCloneRequested && (resp.Method == MethodCopyOnWrite || resp.Method == MethodCopied) {
				want = resp.Method // verified: either is what the filesystem did
			}
			if resp.Method != want {
				t.Errorf("method %q; want %q on server %d", resp.Method, want, v)
			}
			if resp.SourceBytes <= 0 { // issue 40: golden list showed no size
				t.Errorf("source_bytes %d; want the template's size", resp.SourceBytes)
			}
			if err := straggler.Ping(context.Background()); err == nil {
				t.Error("a client connected to the source survived the clone; want it terminated")
			}

			cc := connect(t, resolveT(t, a, admin, dst, cfg).Address)
			if got := count(t, cc, "SELECT count(*) FROM items"); got != 1000 {
				t.Errorf("clone has %d rows; want 1000", got)
			}
			if got := count(t, cc, "SELECT count(*) FROM item_names"); got != 1000 {
				t.Errorf("clone's view has %d rows; want 1000", got)
			}
			var id int
			if err := cc.QueryRow(t.Context(), "INSERT INTO items (name) VALUES ('new') RETURNING id").Scan(&id); err != nil {
				t.Fatal(err)
			}
			if id != 1001 {
				t.Errorf("next id in the clone %d; want 1001 (the sequence was copied)", id)
			}
			sc := connect(t, srcURL)
			if got := count(t, sc, "SELECT count(*) FROM items"); got != 1000 {
				t.Errorf("source has %d rows after a write to the clone; want 1000", got)
			}
		})
	}
}

// TestCloneReplacesExisting: cloning onto a slice that exists replaces it.
func TestCloneReplacesExisting(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	src, dst := testSlice(t, "golden"), testSlice(t, "clone")
	provisionT(t, a, admin, src, nil)
	provisionT(t, a, admin, dst, nil)
	seed(t, resolveT(t, a, admin, src, nil).Address, 3)
	dc := connect(t, resolveT(t, a, admin, dst, nil).Address)
	exec1(t, dc, "CREATE TABLE stale (x int)")
	_ = dc.Close(t.Context())
	if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: src}); err != nil {
		t.Fatalf("clone: %v", err)
	}
	cc := connect(t, resolveT(t, a, admin, dst, nil).Address)
	if got := count(t, cc, "SELECT count(*) FROM pg_tables WHERE tablename = 'stale'"); got != 0 {
		t.Errorf("the replaced slice still has its old table")
	}
	if got := count(t, cc, "SELECT count(*) FROM items"); got != 3 {
		t.Errorf("clone has %d rows; want 3", got)
	}
}

func mustServer(t *testing.T, a *Postgres, admin string) *server {
	t.Helper()
	s, err := a.server(admin)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPickStrategy(t *testing.T) {
	for _, tc := range []struct {
		want    string
		version int
		clause  string
		method  string
		invalid bool
	}{
		{StrategyAuto, 120000, "", MethodFileCopy, false},
		{StrategyFileCopy, 140005, "", MethodFileCopy, false},
		{StrategyWALLog, 140005, "", "", true},
		{StrategyAuto, 150020, "", MethodWALLog, false},
		{StrategyWALLog, 170000, "WAL_LOG", MethodWALLog, false},
		{StrategyFileCopy, 160000, "FILE_COPY", MethodFileCopy, false},
		{StrategyAuto, 180000, "FILE_COPY", MethodCloneRequested, false},
		{StrategyFileCopy, 180001, "FILE_COPY", MethodCloneRequested, false},
		{StrategyWALLog, 180001, "WAL_LOG", MethodWALLog, false},
	} {
		clause, method, err := pickStrategy(tc.want, tc.version)
		if (err != nil) != tc.invalid {
			t.Errorf("pickStrategy(%q, %d) error %v; want error %v", tc.want, tc.version, err, tc.invalid)
			continue
		}
		if clause != tc.clause || method != tc.method {
			t.Errorf("pickStrategy(%q, %d) = %q, %q; want %q, %q", tc.want, tc.version, clause, method, tc.clause, tc.method)
		}
	}
}

// BenchmarkClone measures a clone of a 200,000-row source (its size is
// reported in MB) by the server's default strategy and by FILE_COPY; the
// previous clone is dropped outside the timer.
func BenchmarkClone(b *testing.B) {
	admin := adminFromEnv()
	ctx := context.Background()
	probe, err := pgx.Connect(ctx, admin)
	if err != nil {
		b.Skipf("PostgreSQL not reachable at %s: %v", admin, err)
	}
	_ = probe.Close(ctx)
	for _, strategy := range []string{StrategyAuto, StrategyFileCopy} {
		b.Run(strategy, func(b *testing.B) {
			a := New()
			cfg := map[string]any{KeyCloneStrategy: strategy}
			src, dst := testSlice(b, "golden"), testSlice(b, "clone") // another run may bench beside this one
			tg := func(s string) sdk.Target { return target(admin, s, cfg) }
			defer func() {
				for _, s := range []string{dst, src} {
					_, _ = a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tg(s)})
				}
			}()
			if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tg(src)}); err != nil {
				b.Fatal(err)
			}
			r, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: tg(src)})
			if err != nil {
				b.Fatal(err)
			}
			c, err := pgx.Connect(ctx, r.Address)
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range []string{
				"CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, body text)",
				"INSERT INTO items (name, body) SELECT 'item ' || g, repeat('x', 100) FROM generate_series(1, 200000) g",
				"CREATE INDEX items_name ON items (name)",
			} {
				if _, err := c.Exec(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			var size int64
			if err := c.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&size); err != nil {
				b.Fatal(err)
			}
			_ = c.Close(ctx)
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
		})
	}
}
