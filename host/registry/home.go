package registry

import (
	"context"
	"fmt"

	"zombiezen.com/go/sqlite"
)

// HomeID is this home's stable identity: 16 hex digits, made once when the
// registry was created (or first migrated to schema 5) and never changed.
// It is what tells this home's processes, port leases and slice claims
// from another home's on the same machine.
func (r *Registry) HomeID(ctx context.Context) (string, error) {
	var id string
	err := r.read(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `SELECT id FROM home WHERE one = 1`, func(st *sqlite.Stmt) error {
			id = st.ColumnText(0)
			return nil
		})
	})
	if err == nil && id == "" {
		err = ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read the home id: %w", err)
	}
	return id, nil
}
