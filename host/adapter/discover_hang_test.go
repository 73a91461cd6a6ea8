package adapter

import (
	"errors"
	"github.com/binkyhq/binky/internal/wine"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHangingNeighbourCostsNothing: a binky-adapter-* that hangs on describe
// beside the adapter asked for is never run by Open, is run once by a full
// listing (its failure cached by path, size and mtime, in memory and in the
// cache file), and is run again only when it changes, or when it is itself
// the adapter asked for.
func TestHangingNeighbourCostsNothing(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	installFake(t, dir, "ok")
	hang := copyFake(t, dir, "hangdescribe")
	opts := Options{Home: home, DescribeTimeout: 2 * time.Second}
	h, _ := testHost(t, opts, dir)

	open := func(h *Host) {
		t.Helper()
		c, err := h.Open(t.Context(), "fake-ok")
		if err != nil {
			t.Fatalf("open fake-ok: %v", err)
		}
		_ = c.Close()
	}
	list := func(h *Host) {
		t.Helper()
		infos, err := h.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range infos {
			if i.Path == hang && !strings.Contains(i.Error, "describe") {
				t.Errorf("hanging adapter listed as %+v; want it unusable with the describe error", i)
			}
		}
	}
	want := func(n int, after string) {
		t.Helper()
		if got := describes(t, dir, "hangdescribe"); got != n {
			t.Fatalf("describes of the hanging adapter after %s: got %d; want %d", after, got, n)
		}
	}

	open(h)
	want(0, "open of another adapter")
	list(h)
	want(1, "the first list")
	open(h)
	list(h)
	want(1, "a second open and list")

	// A new Host (a CLI call, a restarted daemon) trusts the cache file.
	h2, _ := testHost(t, opts, dir)
	list(h2)
	if _, err := h2.Find(t.Context(), "no-such-alias"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("find no-such-alias: got %v; want ErrNotFound", err)
	}
	want(1, "a list and an alias lookup by a new host")

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(hang, later, later); err != nil {
		t.Fatal(err)
	}
	list(h2)
	want(2, "its mtime changed")

	// Asked for by name, a binary with a cached failure gets another try.
	if _, err := h2.Find(t.Context(), "fake-hangdescribe"); err == nil || !strings.Contains(err.Error(), "unusable") {
		t.Fatalf("find fake-hangdescribe: got %v; want an unusable-adapter error", err)
	}
	want(3, "a lookup of the hanging adapter itself")
}

// TestConcurrentListsShareDescribes: lists running at the same time run one
// describe of a binary, not one each.
func TestConcurrentListsShareDescribes(t *testing.T) {
	dir := t.TempDir()
	installFake(t, dir, "hangdescribe")
	h, _ := testHost(t, Options{DescribeTimeout: 2 * time.Second}, dir)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := h.List(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := describes(t, dir, "hangdescribe"); got != 1 {
		t.Errorf("describes of one binary by four concurrent lists: got %d; want 1", got)
	}
}

// TestDescribesRunInParallel: the meet-* fakes answer describe only while
// all of them are being described at once, so a one-after-another
// discovery lists them as unusable.
func TestDescribesRunInParallel(t *testing.T) {
	dir := t.TempDir()
	installFake(t, dir, "meet1")
	installFake(t, dir, "meet2")
	installFake(t, dir, "alias")
	h, _ := testHost(t, Options{DescribeTimeout: 60 * time.Second}, dir) // a bound for a hang, not a timing: the fakes meet each other
	// The first discovery decides: a meet fake that answered once finds the
	// others' marks on every later run.
	infos, err := h.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Error != "" {
			t.Errorf("%s: %s", i.Path, i.Error)
		}
	}
	info, err := h.Find(t.Context(), "fakealias")
	if err != nil {
		t.Fatalf("find fakealias: %v", err)
	}
	if want := filepath.Join(dir, Prefix+"fake-alias"); info.Path != want {
		t.Errorf("find fakealias: got %s; want %s", info.Path, want)
	}
}

// TestCacheFailureEntries: a cached failure survives a round trip of the
// cache file, and storing a describe replaces it.
func TestCacheFailureEntries(t *testing.T) {
	wine.Skip(t, "fails under Wine, not yet diagnosed (cache keys of Unix paths)")
	k := cacheKey{Path: "/usr/bin/binky-adapter-x", Size: 3, MtimeNS: 7}
	c := newCache()
	c.storeFailure(k, "describe: timed out")
	c2, err := parseCache(c.encode())
	if err != nil {
		t.Fatal(err)
	}
	if d, failure, ok := c2.lookup(k); !ok || d != nil || failure != "describe: timed out" {
		t.Errorf("lookup after round trip: got %v, %q, %v; want the failure", d, failure, ok)
	}
	if _, _, ok := c2.lookup(cacheKey{Path: k.Path, Size: 3, MtimeNS: 8}); ok {
		t.Errorf("lookup of a changed build: got a hit; want a miss")
	}
	// A cache written before failures were kept still parses.
	old := []byte(`{"version":1,"adapters":[{"path":"/usr/bin/binky-adapter-x","size":3,"mtime_ns":7,"describe":{"protocol":1,"name":"x","clone":false,"rpc":true}}]}`)
	c3, err := parseCache(old)
	if err != nil {
		t.Fatalf("parse a cache without failures: %v", err)
	}
	if d, _, ok := c3.lookup(k); !ok || d == nil || d.Name != "x" {
		t.Errorf("lookup in a cache without failures: got %v, %v; want describe x", d, ok)
	}
}
