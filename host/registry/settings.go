package registry

import (
	"context"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
)

// Setting returns a machine-wide setting; ok is false when it was never set.
func (r *Registry) Setting(ctx context.Context, key string) (value string, ok bool, err error) {
	err = r.read(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `SELECT value FROM settings WHERE key = ?`, func(st *sqlite.Stmt) error {
			value, ok = st.ColumnText(0), true
			return nil
		}, key)
	})
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return value, ok, nil
}

// Settings returns every machine-wide setting.
func (r *Registry) Settings(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := r.read(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `SELECT key, value FROM settings`, func(st *sqlite.Stmt) error {
			out[st.ColumnText(0)] = st.ColumnText(1)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return out, nil
}

// SetSetting records a machine-wide setting.
func (r *Registry) SetSetting(ctx context.Context, key, value string) error {
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, nil, key, value, time.Now().UnixNano())
	})
	if err != nil {
		return fmt.Errorf("record setting %s: %w", key, err)
	}
	return nil
}
