package postgresadapter

import (
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestSizeIsTheDatabaseSize: 8 MiB written into a slice grows its size by
// about 8 MiB (within a tolerance for pages and indexes); a slice that
// does not exist is 0 bytes.
func TestSizeIsTheDatabaseSize(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	defer a.Close()
	name := testSlice(t, "size")
	size := func() int64 {
		t.Helper()
		r, err := a.Size(t.Context(), &sdk.SizeRequest{Header: hdr(), Target: target(admin, name, nil)})
		if err != nil {
			t.Fatalf("size %s: %v", name, err)
		}
		return r.Bytes
	}
	if got := size(); got != 0 {
		t.Errorf("size before provision = %d; want 0", got)
	}
	provisionT(t, a, admin, name, nil)
	empty := size()
	if empty <= 0 {
		t.Fatalf("size of a new database = %d; want > 0", empty)
	}
	c := connect(t, resolveT(t, a, admin, name, nil).Address)
	// Four 1900-byte rows fill a page, stored as they are (no TOAST, no
	// compression): 4415 rows are 8 MiB.
	exec1(t, c, "CREATE TABLE b (x bytea)")
	exec1(t, c, "ALTER TABLE b ALTER COLUMN x SET STORAGE PLAIN")
	exec1(t, c, "INSERT INTO b SELECT substring(decode(repeat(md5(i::text), 119), 'hex') for 1900) FROM generate_series(1, 4415) i")
	const want = 8 << 20
	grown := size() - empty
	if grown < want*9/10 || grown > want*3/2 {
		t.Errorf("size grew by %d; want about %d (8 MiB of rows)", grown, want)
	}
}
