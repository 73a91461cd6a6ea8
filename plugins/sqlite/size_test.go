package sqliteadapter

import (
	"context"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func sliceSize(t *testing.T, tg sdk.Target) *sdk.SizeResponse {
	t.Helper()
	resp, err := New().Size(context.Background(), &sdk.SizeRequest{Header: hdr(), Target: tg})
	if err != nil {
		t.Fatalf("size %q: %v", tg.Slice, err)
	}
	return resp
}

// TestSizeCountsTheDatabase: a slice holding 2 MiB of rows is told within
// a tolerance of 2 MiB (pages, the WAL); a slice that is not there is 0.
func TestSizeCountsTheDatabase(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tg := target(data, "acme_size", nil)
	if got := sliceSize(t, tg).Bytes; got != 0 {
		t.Errorf("size before provision = %d; want 0", got)
	}
	path := provisionSlice(t, tg)
	execSQL(t, path, "CREATE TABLE b(x)", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2048) INSERT INTO b SELECT randomblob(1024) FROM n")
	const want = 2 << 20
	got := sliceSize(t, tg)
	if got.Bytes < want || got.Bytes > want*3/2 {
		t.Errorf("size = %d; want about %d (2 MiB of rows)", got.Bytes, want)
	}
	if got.Shared != 0 {
		t.Errorf("shared = %d; want 0 for a file nobody cloned", got.Shared)
	}
}
