package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/golden"
)

// TestCopyOnWrite: a PostgreSQL template whose worlds the server copied
// (no reflinks) is warned about with what to change; an unverified one
// says why; copy-on-write ones and adapters that copy by design are fine.
func TestCopyOnWrite(t *testing.T) {
	for _, tc := range []struct {
		adapter, method string
		want            Status
		says            string
	}{
		{"postgres", "", StatusOK, "no golden template cloned"},
		{"postgres", "file_copy, copy-on-write", StatusOK, "1 of 1"},
		{"postgres", "file_copy, copied", StatusWarn, "full copies"},
		{"postgres", "file_copy, clone requested", StatusWarn, "could not verify"},
		{"postgres", "wal_log", StatusOK, "copy by design"},
		{"mysql", "table_copy", StatusOK, "copy by design"},
		{"sqlite", "reflink", StatusOK, "1 of 1"},
	} {
		t.Run(tc.adapter+"/"+tc.method, func(t *testing.T) {
			home := t.TempDir()
			r := &golden.Record{Project: "shop", Service: "db", CloneFrom: "golden", Adapter: tc.adapter, Slice: "shop_golden_golden_12345678", Key: "k", Created: time.Now()}
			r.Cloned("main", tc.method, time.Now())
			if err := golden.NewStore(home).Put(r); err != nil {
				t.Fatal(err)
			}
			fs := checkCopyOnWrite(context.Background(), &Env{Home: home})
			if len(fs) != 1 {
				t.Fatalf("findings %v; want one", fs)
			}
			if fs[0].Status != tc.want || !strings.Contains(fs[0].Message, tc.says) {
				t.Errorf("got %s %q; want %s saying %q", fs[0].Status, fs[0].Message, tc.want, tc.says)
			}
			if fs[0].Status == StatusWarn && fs[0].Fix == "" {
				t.Error("a warning without a fix")
			}
		})
	}
}
