package mysqladapter

import (
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestSizeIsTheTablesSum: 8 MiB written into a slice's table grows its
// size by about 8 MiB once the server's statistics are fresh (InnoDB pages
// are never full: a generous tolerance); a slice that does not exist is 0
// bytes.
func TestSizeIsTheTablesSum(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	defer a.Close()
	name := testSlice(t, "size")
	size := func() *sdk.SizeResponse {
		t.Helper()
		r, err := a.Size(t.Context(), &sdk.SizeRequest{Header: hdr(), Target: target(admin, name, nil)})
		if err != nil {
			t.Fatalf("size %s: %v", name, err)
		}
		return r
	}
	if got := size().Bytes; got != 0 {
		t.Errorf("size before provision = %d; want 0", got)
	}
	provisionT(t, a, admin, name, nil)
	db := sliceDB(t, a, admin, name)
	exec1(t, db, "CREATE TABLE b (id INT PRIMARY KEY, x VARBINARY(2000)) ENGINE=InnoDB")
	// 8^4 = 4096 rows of 1 KiB, built without recursion (whose limit
	// MySQL and MariaDB name differently).
	const eight = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7)"
	exec1(t, db, "INSERT INTO b SELECT i, UNHEX(REPEAT(SHA2(i, 256), 32)) FROM (SELECT a.d*512 + b.d*64 + c.d*8 + e.d AS i FROM "+
		eight+" a, "+eight+" b, "+eight+" c, "+eight+" e) n")
	exec1(t, db, "ANALYZE TABLE b")
	const want = 4 << 20
	got := size()
	if got.Bytes < want*9/10 || got.Bytes > want*2 {
		t.Errorf("size = %d; want about %d (4 MiB of rows)", got.Bytes, want)
	}
	if !got.Approximate {
		t.Error("size is not marked approximate; InnoDB's figures are statistics")
	}
}
