package golden

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk/names"
)

func TestEvict(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	g := Group{Project: "shop", CloneFrom: "golden", Adapter: "postgres", Server: "postgres://h:5432"}
	rec := func(slice string, used int) *Record {
		return &Record{Project: "shop", CloneFrom: "golden", Adapter: "postgres", Server: g.Server, Slice: slice, Key: slice, Created: t0, LastUsed: t0.Add(time.Duration(used) * time.Hour)}
	}
	a, b, c, d := rec("a", 1), rec("b", 4), rec("c", 2), rec("d", 3)
	other := rec("x", 0)
	other.CloneFrom = "other"
	otherServer := rec("y", 0)
	otherServer.Server = "postgres://elsewhere:5432"
	old := &Record{Adapter: "postgres", Slice: names.Golden("shop", "golden"), Legacy: true}
	all := []*Record{a, b, c, d, other, otherServer, old}

	slices := func(rs []*Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Slice)
		}
		return out
	}
	for _, tc := range []struct {
		keep      int
		keepSlice string
		want      []string
	}{
		{3, "d", []string{"a", old.Slice}}, // d, b and c stay
		{1, "a", []string{"b", "d", "c", old.Slice}},
		{5, "b", nil},
		{0, "b", []string{"d", "c", "a", old.Slice}},
	} {
		got := slices(Evict(all, g, tc.keep, tc.keepSlice))
		if len(got) != len(tc.want) {
			t.Errorf("keep %d, keeping %s: evict %v; want %v", tc.keep, tc.keepSlice, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("keep %d, keeping %s: evict %v; want %v", tc.keep, tc.keepSlice, got, tc.want)
				break
			}
		}
	}
}

func TestStoreRoundTripAndLegacy(t *testing.T) {
	home := t.TempDir()
	s := NewStore(home)
	r := &Record{Project: "shop", Service: "db", CloneFrom: "golden", Adapter: "sqlite", Slice: "shop_golden_golden_01234567", Key: "0123456789", Created: time.Now()}
	r.Used("main", time.Now())
	r.Used("main", time.Now())
	r.Used("feat-x", time.Now())
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(home, "golden", "sqlite", r.Slice+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 { // Windows: ACLs, not modes
		t.Errorf("record mode %v; want 0600", fi.Mode().Perm())
	}
	// An old-format marker sits beside it.
	if err := os.WriteFile(filepath.Join(home, "golden", "sqlite", "shop_golden_golden"), []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("listed %d records; want 2", len(recs))
	}
	var got, leg *Record
	for _, x := range recs {
		if x.Legacy {
			leg = x
		} else {
			got = x
		}
	}
	if got == nil || got.Key != r.Key || len(got.Worlds) != 2 {
		t.Errorf("record read back as %+v; want key %s and worlds [main feat-x]", got, r.Key)
	}
	if leg == nil || leg.Project != "shop" || leg.CloneFrom != "golden" || leg.Key != "" {
		t.Fatalf("legacy marker read as %+v; want project shop, clone_from golden, no key", leg)
	}
	if err := s.Put(leg); err == nil {
		t.Errorf("a legacy record was rewritten in the new format")
	}
	for _, x := range recs {
		if err := s.Delete(x); err != nil {
			t.Fatal(err)
		}
	}
	if recs, _ := s.List(); len(recs) != 0 {
		t.Errorf("after delete, %d records remain", len(recs))
	}
}

func TestSelect(t *testing.T) {
	recs := []*Record{
		{Project: "shop", Slice: "shop_golden_golden_aaaaaaaa", Key: "aaaaaaaa11"},
		{Project: "shop", Slice: "shop_golden_golden_bbbbbbbb", Key: "bbbbbbbb22"},
		{Project: "blog", Slice: "blog_golden_golden_aaaaaaaa", Key: "aaaaaaaa33"},
	}
	if got, err := Select(recs, "shop_golden_golden_bbbbbbbb", ""); err != nil || len(got) != 1 || got[0] != recs[1] {
		t.Errorf("by name: %v %v", got, err)
	}
	if got, err := Select(recs, "bbbbbbbb", ""); err != nil || len(got) != 1 || got[0] != recs[1] {
		t.Errorf("by key: %v %v", got, err)
	}
	if _, err := Select(recs, "aaaaaaaa", ""); err == nil {
		t.Errorf("an ambiguous key selected one template")
	}
	if got, err := Select(recs, "", "shop"); err != nil || len(got) != 2 {
		t.Errorf("by project: %v %v", got, err)
	}
	for _, bad := range [][2]string{{"nope", ""}, {"", "nope"}, {"", ""}, {"x", "shop"}} {
		if _, err := Select(recs, bad[0], bad[1]); err == nil {
			t.Errorf("Select(%q, %q) found something", bad[0], bad[1])
		}
	}
}

func TestSize(t *testing.T) {
	data := t.TempDir()
	write(t, data, "shop/shop_golden_golden_01234567.db", "12345")
	write(t, data, "shop/shop_golden_golden_01234567.db-wal", "123")
	write(t, data, "shop/shop_golden_golden_01234567x.db", "nope")
	if got := Size(data, "shop_golden_golden_01234567"); got != 8 {
		t.Errorf("Size = %d; want 8 (the file and its WAL)", got)
	}
	if got := Size(data, "absent"); got != -1 {
		t.Errorf("Size of an absent slice = %d; want -1", got)
	}
}
