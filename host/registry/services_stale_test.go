package registry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitemigration"

	"github.com/binkyhq/binky/host/state"
)

// TestServiceGoldenKeyAndMigrateSum: a slice's golden key and migrate sum
// are recorded, kept by an upsert that leaves them empty, and replaced by
// one that sets them.
func TestServiceGoldenKeyAndMigrateSum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	db := &Service{WorktreeID: w.ID, Name: "db", Kind: KindAdapter, Slice: "shop_main", GoldenKey: "k1", MigrateSum: "m1"}
	steps := []struct {
		name         string
		key, sum     string
		wantK, wantM string
	}{
		{"recorded", "k1", "m1", "k1", "m1"},
		{"kept when empty", "", "", "k1", "m1"},
		{"key replaced", "k2", "", "k2", "m1"},
		{"sum replaced", "", "m2", "k2", "m2"},
	}
	for _, st := range steps {
		db.GoldenKey, db.MigrateSum = st.key, st.sum
		if err := r.UpsertService(ctx, db); err != nil {
			t.Fatal(err)
		}
		got, err := r.Service(ctx, w.ID, "db")
		if err != nil {
			t.Fatal(err)
		}
		if got.GoldenKey != st.wantK || got.MigrateSum != st.wantM || got.Slice != "shop_main" {
			t.Errorf("%s: golden key %q, migrate sum %q, slice %q; want %q, %q, shop_main", st.name, got.GoldenKey, got.MigrateSum, got.Slice, st.wantK, st.wantM)
		}
	}
}

// TestSetServiceURL changes the url and nothing else of the service.
func TestSetServiceURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	in := &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd, State: state.ServiceRunning,
		Ports: map[string]int{"http": 20000}, URL: "http://web.main.shop.localhost", SpecHash: "h", GoldenKey: "k"}
	if err := r.UpsertService(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := r.SetServiceProcess(ctx, w.ID, "web", 100, 100, 555, state.ServiceRunning); err != nil {
		t.Fatal(err)
	}
	before, err := r.Service(ctx, w.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetServiceURL(ctx, w.ID, "web", "https://web.main.shop.localhost"); err != nil {
		t.Fatal(err)
	}
	after, err := r.Service(ctx, w.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if after.URL != "https://web.main.shop.localhost" {
		t.Errorf("url = %q; want the https one", after.URL)
	}
	b, a := *before, *after
	b.URL, a.URL, b.UpdatedAt, a.UpdatedAt = "", "", time.Time{}, time.Time{}
	if !reflect.DeepEqual(&a, &b) {
		t.Errorf("SetServiceURL changed more than the url:\nbefore %+v\nafter  %+v", &b, &a)
	}
	if err := r.SetServiceURL(ctx, w.ID, "gone", "http://x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetServiceURL of a missing service: %v; want ErrNotFound", err)
	}
}

// TestServiceStopped: a service the user stopped stays stopped through
// upserts (a later up re-recording its definition) until
// SetServiceStopped changes it; a new service is written with it.
func TestServiceStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	stopped := func(name string) bool {
		t.Helper()
		s, err := r.Service(ctx, w.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		return s.Stopped
	}
	web := &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}
	if err := r.UpsertService(ctx, web); err != nil {
		t.Fatal(err)
	}
	if stopped("web") {
		t.Errorf("a new service is stopped; want not")
	}
	if err := r.SetServiceStopped(ctx, w.ID, "web", true); err != nil {
		t.Fatal(err)
	}
	if err := r.UpsertService(ctx, web); err != nil { // Stopped false: kept
		t.Fatal(err)
	}
	if err := r.SetServiceState(ctx, w.ID, "web", state.ServiceStopped, nil, ""); err != nil {
		t.Fatal(err)
	}
	if !stopped("web") {
		t.Errorf("after upsert and a state change: not stopped; want the user's stop kept")
	}
	if err := r.SetServiceStopped(ctx, w.ID, "web", false); err != nil {
		t.Fatal(err)
	}
	web.Stopped = true // an upsert does not stop an existing service
	if err := r.UpsertService(ctx, web); err != nil {
		t.Fatal(err)
	}
	if stopped("web") {
		t.Errorf("after SetServiceStopped(false) and an upsert: stopped; want not")
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "worker", Kind: KindCmd, Stopped: true}); err != nil {
		t.Fatal(err)
	}
	if !stopped("worker") {
		t.Errorf("a new service recorded stopped: not stopped")
	}
	if err := r.SetServiceStopped(ctx, w.ID, "gone", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetServiceStopped of a missing service: %v; want ErrNotFound", err)
	}
}

// TestMigrateFromVersion7: a registry at schema 7 (its DDL: the first
// seven migrations) with worlds and services in it opens at this
// binary's schema with every recorded value kept and the new columns at
// their defaults. Read-only, it is refused until migrated, as any older
// schema is.
func TestMigrateFromVersion7(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	conn, err := sqlite.OpenConn(path, openFlags)
	if err != nil {
		t.Fatal(err)
	}
	old := sqlitemigration.Schema{AppID: AppID, Migrations: migrations()[:7]}
	if err := sqlitemigration.Migrate(ctx, conn, old); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, `
INSERT INTO worktrees (id, project, name, branch, state, created_at, updated_at) VALUES (1, 'shop', 'main', 'main', 'up', 1, 2);
INSERT INTO services (worktree_id, name, kind, state, pid, pgid, start_time, ports, url, vals, restarts, updated_at, spec, spec_hash)
	VALUES (1, 'web', 'cmd', 'running', 4242, 4242, 99, '{"http":20000}', 'http://web.main.shop.localhost', '{}', 3, 5, '{"cmd":"x"}', 'h7');
INSERT INTO services (worktree_id, name, kind, state, ports, address, vals, updated_at, slice, adapter, admin, config)
	VALUES (1, 'db', 'adapter', 'provisioned', '{}', 'postgres://127.0.0.1/shop_main', '{"schema":"public"}', 6, 'shop_main', 'postgres', 'postgres://admin', '{"owner_role":true}');
INSERT INTO port_blocks (project, worktree, lo, hi, created_at) VALUES ('shop', 'main', 20000, 20001, 7);
`)
	if v := rawPragma(t, path, "user_version"); v != "7" {
		t.Fatalf("user_version = %s; want 7 for this test to mean anything", v)
	}
	if _, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "its schema version is 7") {
		t.Errorf("OpenReadOnly of schema 7: %v; want it refused, naming version 7", err)
	}

	r, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of schema 7: %v", err)
	}
	defer r.Close()
	if v := rawPragma(t, path, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version after Open = %s; want %d", v, SchemaVersion)
	}
	wt, err := r.Worktree(ctx, "shop", "main")
	if err != nil || wt.ID != 1 || wt.State != "up" || wt.PortLo != 20000 || wt.PortHi != 20001 {
		t.Fatalf("worktree after migration = %+v, %v; want #1 up on 20000-20001", wt, err)
	}
	got, err := r.Services(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Service{
		{WorktreeID: 1, Name: "db", Kind: KindAdapter, State: state.ServiceProvisioned, Ports: map[string]int{},
			Address: "postgres://127.0.0.1/shop_main", Values: map[string]string{"schema": "public"},
			UpdatedAt: time.Unix(0, 6), Slice: "shop_main", Adapter: "postgres", Admin: "postgres://admin", Config: `{"owner_role":true}`},
		{WorktreeID: 1, Name: "web", Kind: KindCmd, State: state.ServiceRunning, PID: 4242, PGID: 4242, StartTime: 99,
			Ports: map[string]int{"http": 20000}, URL: "http://web.main.shop.localhost", Values: map[string]string{}, Restarts: 3,
			UpdatedAt: time.Unix(0, 5), Spec: `{"cmd":"x"}`, SpecHash: "h7"},
	}
	if len(got) != len(want) {
		t.Fatalf("services after migration: %v; want db, web", names(got))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("service %s after migration:\n got %+v\nwant %+v", want[i].Name, got[i], want[i])
		}
	}
	// The new columns work on the migrated rows.
	if err := r.SetServiceStopped(ctx, 1, "web", true); err != nil {
		t.Fatal(err)
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: 1, Name: "db", Kind: KindAdapter, GoldenKey: "k", MigrateSum: "m"}); err != nil {
		t.Fatal(err)
	}
	web, _ := r.Service(ctx, 1, "web")
	db, _ := r.Service(ctx, 1, "db")
	if web == nil || !web.Stopped || db == nil || db.GoldenKey != "k" || db.MigrateSum != "m" || db.Slice != "shop_main" {
		t.Errorf("after writing the new columns: web %+v, db %+v", web, db)
	}
}
