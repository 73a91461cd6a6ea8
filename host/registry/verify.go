package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
)

// keepVerifyRuns is how many verify runs are kept per worktree; older ones
// are dropped as new ones are added.
const keepVerifyRuns = 50

// VerifyRun is one `binky verify` of a worktree.
type VerifyRun struct {
	ID         int64
	WorktreeID int64
	StartedAt  time.Time
	Duration   time.Duration // stored to the millisecond
	Commit     string        // HEAD when it ran
	Dirty      bool          // the worktree had uncommitted changes
	Passed     bool
	Checks     []Check
}

// Check is one verify command's outcome.
type Check struct {
	Cmd      string
	ExitCode int
	Duration time.Duration // stored to the millisecond
	Passed   bool
}

// checkJSON is how a Check is stored.
type checkJSON struct {
	Cmd        string `json:"cmd"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Passed     bool   `json:"passed"`
}

// AddVerifyRun records v and sets its ID. Only the newest runs of each
// worktree are kept.
func (r *Registry) AddVerifyRun(ctx context.Context, v *VerifyRun) error {
	checks := make([]checkJSON, 0, len(v.Checks))
	for _, c := range v.Checks {
		checks = append(checks, checkJSON{Cmd: c.Cmd, ExitCode: c.ExitCode, DurationMS: c.Duration.Milliseconds(), Passed: c.Passed})
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return fmt.Errorf("record verify run of worktree #%d: %w", v.WorktreeID, err)
	}
	err = r.write(ctx, func(conn *sqlite.Conn) error {
		err := execute(conn, `INSERT INTO verify_runs
	(worktree_id, started_at, duration_ms, git_commit, dirty, passed, checks)
VALUES (?, ?, ?, ?, ?, ?, ?)`, nil,
			v.WorktreeID, unixNano(v.StartedAt), v.Duration.Milliseconds(), v.Commit, v.Dirty, v.Passed, string(b))
		if err != nil {
			return err
		}
		v.ID = conn.LastInsertRowID()
		return execute(conn, `DELETE FROM verify_runs WHERE worktree_id = ?1 AND id NOT IN
	(SELECT id FROM verify_runs WHERE worktree_id = ?1 ORDER BY id DESC LIMIT ?2)`, nil,
			v.WorktreeID, keepVerifyRuns)
	})
	if err != nil {
		return fmt.Errorf("record verify run of worktree #%d: %w", v.WorktreeID, err)
	}
	return nil
}

// LastVerifyRun returns a worktree's newest verify run, or ErrNotFound.
func (r *Registry) LastVerifyRun(ctx context.Context, worktreeID int64) (*VerifyRun, error) {
	vs, err := r.VerifyRuns(ctx, worktreeID, 1)
	if err == nil && len(vs) == 0 {
		err = fmt.Errorf("look up last verify run of worktree #%d: %w", worktreeID, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// VerifyRuns returns a worktree's newest verify runs, newest first, at most
// limit of them (all kept ones when limit <= 0).
func (r *Registry) VerifyRuns(ctx context.Context, worktreeID int64, limit int) ([]*VerifyRun, error) {
	if limit <= 0 {
		limit = keepVerifyRuns
	}
	var out []*VerifyRun
	err := r.read(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `SELECT id, worktree_id, started_at, duration_ms, git_commit, dirty, passed, checks
FROM verify_runs WHERE worktree_id = ? ORDER BY id DESC LIMIT ?`, func(stmt *sqlite.Stmt) error {
			v := &VerifyRun{
				ID:         stmt.ColumnInt64(0),
				WorktreeID: stmt.ColumnInt64(1),
				StartedAt:  fromUnixNano(stmt.ColumnInt64(2)),
				Duration:   time.Duration(stmt.ColumnInt64(3)) * time.Millisecond,
				Commit:     stmt.ColumnText(4),
				Dirty:      stmt.ColumnBool(5),
				Passed:     stmt.ColumnBool(6),
			}
			var checks []checkJSON
			if err := json.Unmarshal([]byte(stmt.ColumnText(7)), &checks); err != nil {
				return fmt.Errorf("decode checks of verify run #%d: %w", v.ID, err)
			}
			for _, c := range checks {
				v.Checks = append(v.Checks, Check{Cmd: c.Cmd, ExitCode: c.ExitCode, Duration: time.Duration(c.DurationMS) * time.Millisecond, Passed: c.Passed})
			}
			out = append(out, v)
			return nil
		}, worktreeID, limit)
	})
	if err != nil {
		return nil, fmt.Errorf("list verify runs of worktree #%d: %w", worktreeID, err)
	}
	return out, nil
}
