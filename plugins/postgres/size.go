package postgresadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/extents"
	"github.com/jackc/pgx/v5"
)

// Size is pg_database_size of the slice's database (its test databases
// not included). Where the server's data directory is readable here and
// the filesystem maps extents, the blocks the database shares with its
// template (a copy-on-write clone, PostgreSQL 18's file_copy on a
// reflink filesystem) are reported as Shared. A database that does not
// exist is 0 bytes. Size reads only: it neither checks nor records the
// slice's claim.
func (p *Postgres) Size(ctx context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	op := fmt.Sprintf("size of postgres slice %q", req.Slice)
	s, err := p.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var n int64
	err = s.srv.pool.QueryRow(ctx, `SELECT pg_database_size(oid) FROM pg_database WHERE datname = $1`, s.db).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return &sdk.SizeResponse{}, nil
	}
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	resp := &sdk.SizeResponse{Bytes: n}
	if dir, _ := databaseDir(ctx, s.srv.pool, s.db); dir != "" {
		if _, shared, err := extents.Dir(dir); err == nil && shared > 0 {
			resp.Shared = min(shared, n)
			resp.Note = "blocks shared with the template database (copy-on-write) are counted once, with the template"
		}
	}
	return resp, nil
}

var _ sdk.Sizer = (*Postgres)(nil)
