package sqliteadapter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func target(dataDir, slice string, config map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "acme", DataDir: dataDir, Config: config}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

func provisionSlice(t *testing.T, tg sdk.Target) string {
	t.Helper()
	if _, err := New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: tg}); err != nil {
		t.Fatalf("provision %q: %v", tg.Slice, err)
	}
	res, err := New().Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: tg})
	if err != nil {
		t.Fatalf("resolve %q: %v", tg.Slice, err)
	}
	return res.Values["path"]
}

// execSQL runs statements against the database file at path.
func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s on %s: %v", s, path, err)
		}
	}
}

func queryInt(t *testing.T, path, q string) int {
	t.Helper()
	db, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s on %s: %v", q, path, err)
	}
	return n
}

func TestDescribe(t *testing.T) {
	resp, err := New().Describe(context.Background(), &sdk.DescribeRequest{Header: hdr()})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Name != "sqlite" || !resp.Clone {
		t.Errorf("describe: got name %q clone %v; want sqlite, true", resp.Name, resp.Clone)
	}
}

func TestProvisionCreatesWALDatabaseIdempotently(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tg := target(data, "acme_main", nil)
	path := provisionSlice(t, tg)
	if want := filepath.Join(data, "acme", "acme_main.db"); path != want {
		t.Fatalf("path: got %s; want %s", path, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the new database: %v", err)
	}
	if len(b) < 100 || !bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
		t.Fatalf("the new file is not a SQLite database: %d bytes, starts %q", len(b), b[:min(16, len(b))])
	}
	if b[18] != 2 || b[19] != 2 {
		t.Errorf("header read/write versions: got %d/%d; want 2/2 (WAL)", b[18], b[19])
	}
	execSQL(t, path, "CREATE TABLE kept(x)", "INSERT INTO kept VALUES (1)")
	provisionSlice(t, tg) // again: must keep what is there
	if n := queryInt(t, path, "SELECT count(*) FROM kept"); n != 1 {
		t.Errorf("rows after a second provision: got %d; want 1", n)
	}
}

func TestProvisionRefusesWhatIsNotADatabase(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := filepath.Join(data, "acme")
	if err := os.MkdirAll(filepath.Join(dir, "a_dir.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a_text.db"), bytes.Repeat([]byte("not a database\n"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, slice := range []string{"a_dir", "a_text"} {
		_, err := New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: target(data, slice, nil)})
		if got := sdk.CodeOf(err); err == nil || got != sdk.CodeConflict {
			t.Errorf("provision over %s: got %v (code %s); want code conflict", slice, err, got)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	abs := t.TempDir()
	tests := []struct {
		name     string
		config   map[string]any
		wantPath string
	}{
		{"default dir", nil, filepath.Join(data, "acme", "s1.db")},
		{"relative dir", map[string]any{"dir": "custom/place"}, filepath.Join(data, "custom", "place", "s1.db")},
		{"absolute dir", map[string]any{"dir": abs}, filepath.Join(abs, "s1.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := New().Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(data, "s1", tt.config)})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Values["path"]; got != tt.wantPath {
				t.Errorf("values.path: got %s; want %s", got, tt.wantPath)
			}
			if got := res.Values["database"]; got != tt.wantPath {
				t.Errorf("values.database: got %s; want %s", got, tt.wantPath)
			}
			wantAddr := "sqlite://" + filepath.ToSlash(tt.wantPath)
			if !strings.HasPrefix(filepath.ToSlash(tt.wantPath), "/") {
				wantAddr = "sqlite:///" + filepath.ToSlash(tt.wantPath)
			}
			if res.Address != wantAddr {
				t.Errorf("address: got %s; want %s", res.Address, wantAddr)
			}
		})
	}
}

func TestDestroyRemovesDatabaseAndCompanions(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tg := target(data, "gone", nil)
	path := provisionSlice(t, tg)
	if runtime.GOOS == "windows" {
		// SQLite opens a database without FILE_SHARE_DELETE, so destroy
		// refuses a slice held open (TestDestroyWhileHeld); here the
		// companions are what a process that is gone left behind.
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if err := os.WriteFile(path+suffix, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		// Hold a connection open with uncheckpointed writes, so -wal and
		// -shm exist.
		db, err := openDB(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("PRAGMA wal_autocheckpoint=0; CREATE TABLE t(x); INSERT INTO t VALUES (1)"); err != nil {
			t.Fatal(err)
		}
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err != nil {
			t.Fatalf("before destroy: %v", err)
		}
	}
	for i := range 2 { // twice: the second finds nothing and is still ok
		if _, err := New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: tg}); err != nil {
			t.Fatalf("destroy #%d: %v", i+1, err)
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); !os.IsNotExist(err) {
			t.Errorf("after destroy, %s: got %v; want it gone", path+suffix, err)
		}
	}
	// A never-provisioned slice in a directory that does not exist.
	if _, err := New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(t.TempDir(), "never", nil)}); err != nil {
		t.Errorf("destroy of a slice never provisioned: got %v; want ok", err)
	}
}

// TestInvalidRequests sends each bad name or config to every verb.
func TestInvalidRequests(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tests := []struct {
		name string
		tg   sdk.Target
	}{
		{"empty slice", target(data, "", nil)},
		{"slash", target(data, "a/b", nil)},
		{"backslash", target(data, `a\b`, nil)},
		{"dot dot", target(data, "..", nil)},
		{"parent path", target(data, "../escape", nil)},
		{"dots inside", target(data, "a..b", nil)},
		{"NUL", target(data, "a\x00b", nil)},
		{"hidden", target(data, ".hidden", nil)},
		{"option-like", target(data, "-rf", nil)},
		{"space", target(data, "a b", nil)},
		{"non-ASCII", target(data, "café", nil)},
		{"device name", target(data, "nul", nil)},
		{"device name with suffix", target(data, "COM1.x", nil)},
		{"too long", target(data, strings.Repeat("a", maxName+1), nil)},
		{"unknown config key", target(data, "ok", map[string]any{"path": "/x"})},
		{"dir not a string", target(data, "ok", map[string]any{"dir": 3})},
		{"dir empty", target(data, "ok", map[string]any{"dir": ""})},
		{"bad project", sdk.Target{Slice: "ok", Project: "../x", DataDir: data}},
		{"no data dir, relative dir", sdk.Target{Slice: "ok", Project: "acme", Config: map[string]any{"dir": "rel"}}},
		{"no data dir, no dir", sdk.Target{Slice: "ok", Project: "acme"}},
		{"relative data dir", sdk.Target{Slice: "ok", Project: "acme", DataDir: "relative"}},
	}
	a := New()
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := map[string]error{}
			_, calls["provision"] = a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: tt.tg})
			_, calls["resolve"] = a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: tt.tg})
			_, calls["destroy"] = a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tt.tg})
			_, calls["clone"] = a.Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: tt.tg, Source: "src"})
			for call, err := range calls {
				if got := sdk.CodeOf(err); err == nil || got != sdk.CodeInvalid {
					t.Errorf("%s: got %v (code %s); want code invalid", call, err, got)
				}
			}
		})
	}
	entries, _ := os.ReadDir(data)
	if len(entries) != 0 {
		t.Errorf("invalid requests left %d entries in the data dir; want none", len(entries))
	}
}
