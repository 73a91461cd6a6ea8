package golden

import (
	"testing"
	"time"
)

// TestCurrentTemplate (issue 40): a world re-cloned from a newer template
// of the same service is that template's only, whatever the templates'
// last use; a record written before ClonedAt falls back to LastUsed.
func TestCurrentTemplate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a := &Record{Project: "p", Service: "db", Slice: "a"}
	b := &Record{Project: "p", Service: "db", Slice: "b"}
	other := &Record{Project: "p", Service: "cache", Slice: "c"}
	a.Used("x", t0)
	b.Used("x", t0.Add(time.Minute)) // x re-cloned from b
	a.Used("y", t0.Add(2*time.Minute))
	other.Used("x", t0.Add(3*time.Minute))
	recs := []*Record{a, b, other}
	for _, tc := range []struct {
		r     *Record
		world string
		want  bool
	}{
		{a, "x", false}, {b, "x", true}, {a, "y", true}, {b, "y", false}, {other, "x", true},
	} {
		if got := tc.r.Current(tc.world, recs); got != tc.want {
			t.Errorf("%s.Current(%s) = %v; want %v", tc.r.Slice, tc.world, got, tc.want)
		}
	}
	old := &Record{Project: "p", Service: "db", Slice: "old", Worlds: []string{"x"}, LastUsed: t0.Add(-time.Hour)}
	if old.Current("x", []*Record{old, b}) || !b.Current("x", []*Record{old, b}) {
		t.Errorf("a record without cloned_at: want x under b, the later clone")
	}
}
