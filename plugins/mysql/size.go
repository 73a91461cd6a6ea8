package mysqladapter

import (
	"context"
	"fmt"

	"github.com/binkyhq/binky/sdk"
)

// Size is the sum of DATA_LENGTH and INDEX_LENGTH over the slice
// database's tables in information_schema (its test databases not
// included). InnoDB keeps those figures from its statistics, which lag
// behind recent writes, so the answer is marked approximate. A database
// that does not exist is 0 bytes. Size reads only: it neither checks nor
// records the slice's claim.
func (m *MySQL) Size(ctx context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	op := fmt.Sprintf("size of mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var n int64
	err = s.srv.db.QueryRowContext(ctx,
		"SELECT CAST(COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", s.db).
		Scan(&n)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.SizeResponse{Bytes: n, Approximate: true, Note: "table and index sizes from the server's statistics"}, nil
}

var _ sdk.Sizer = (*MySQL)(nil)
