package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/binkyhq/binky/host/state"
)

// Worktree is one world: a git worktree of a project's repository.
type Worktree struct {
	ID      int64
	Project string
	// Name is the worktree name (the branch folded to [a-z0-9-]); unique
	// within the project.
	Name       string
	Branch     string
	Path       string // the worktree's directory
	Repo       string // the main repository's directory
	ConfigPath string // its binky.toml
	// State is one of host/state's recorded world states
	// (state.World.Recorded).
	State state.World
	// Reason says why the world is failed or degraded ("" otherwise).
	Reason string
	// PortLo and PortHi bound its port block; both 0 when it has none.
	// They are read from the port blocks (see ReservePortBlock);
	// UpsertWorktree ignores them.
	PortLo, PortHi int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Secrets are the values resolved from ${env.*} at the last up, kept so
	// a restarted daemon still redacts them (see SetWorktreeSecrets).
	Secrets []string
	// Selection is the choice of services the world runs, as up recorded
	// it (see SetWorktreeSelection); "" runs every service.
	Selection string
	// StableName is the name of the project's stable_names this world was
	// handed (ClaimStableName); "" when none.
	StableName string
}

const worktreeSelect = `SELECT w.id, w.project, w.name, w.branch, w.path, w.repo,
	w.config_path, w.state, COALESCE(p.lo, 0), COALESCE(p.hi, 0),
	w.created_at, w.updated_at, w.secrets, w.reason, w.selection, w.stable_name
FROM worktrees w
LEFT JOIN port_blocks p ON p.project = w.project AND p.worktree = w.name
`

func scanWorktree(stmt *sqlite.Stmt) *Worktree {
	return &Worktree{
		ID:         stmt.ColumnInt64(0),
		Project:    stmt.ColumnText(1),
		Name:       stmt.ColumnText(2),
		Branch:     stmt.ColumnText(3),
		Path:       stmt.ColumnText(4),
		Repo:       stmt.ColumnText(5),
		ConfigPath: stmt.ColumnText(6),
		State:      state.World(stmt.ColumnText(7)),
		PortLo:     stmt.ColumnInt(8),
		PortHi:     stmt.ColumnInt(9),
		CreatedAt:  fromUnixNano(stmt.ColumnInt64(10)),
		UpdatedAt:  fromUnixNano(stmt.ColumnInt64(11)),
		Secrets:    decodeStrings(stmt.ColumnText(12)),
		Reason:     stmt.ColumnText(13),
		Selection:  stmt.ColumnText(14),
		StableName: stmt.ColumnText(15),
	}
}

func decodeStrings(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// SetWorktreeSecrets records the secret values of a worktree's last up.
func (r *Registry) SetWorktreeSecrets(ctx context.Context, id int64, secrets []string) error {
	if secrets == nil {
		secrets = []string{}
	}
	b, err := json.Marshal(secrets)
	if err != nil {
		return err
	}
	err = r.write(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, "UPDATE worktrees SET secrets = ? WHERE id = ?", nil, string(b), id)
	})
	if err != nil {
		return fmt.Errorf("record secrets of worktree #%d: %w", id, err)
	}
	return nil
}

// SetWorktreeSelection records the choice of services the world runs
// ("" for all of them); ErrNotFound when there is no worktree id.
func (r *Registry) SetWorktreeSelection(ctx context.Context, id int64, selection string) error {
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		if err := execute(conn, "UPDATE worktrees SET selection = ? WHERE id = ?", nil, selection, id); err != nil {
			return err
		}
		if conn.Changes() == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the services selected for worktree #%d: %w", id, err)
	}
	return nil
}

func queryWorktrees(conn *sqlite.Conn, where string, args ...any) ([]*Worktree, error) {
	var out []*Worktree
	err := execute(conn, worktreeSelect+where, func(stmt *sqlite.Stmt) error {
		out = append(out, scanWorktree(stmt))
		return nil
	}, args...)
	return out, err
}

// UpsertWorktree records w, keyed by (Project, Name): a new worktree is
// created (state down when State is empty); an existing one gets w's
// branch, paths and, when State is not empty, state. It returns the stored
// worktree, with its ID. A State the registry does not record
// (state.World.Recorded) is ErrUnknownState.
func (r *Registry) UpsertWorktree(ctx context.Context, w *Worktree) (*Worktree, error) {
	if w.Project == "" || w.Name == "" {
		return nil, fmt.Errorf("record worktree %q of project %q: project and name are required", w.Name, w.Project)
	}
	if w.State != "" && !w.State.Recorded() {
		return nil, fmt.Errorf("record worktree %s/%s in state %q: %w", w.Project, w.Name, w.State, ErrUnknownState)
	}
	var got *Worktree
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		now := r.now().UnixNano()
		insertState := w.State
		if insertState == "" {
			insertState = state.WorldDown
		}
		err := execute(conn, `INSERT INTO worktrees
	(project, name, branch, path, repo, config_path, state, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?9)
ON CONFLICT (project, name) DO UPDATE SET
	branch = excluded.branch, path = excluded.path, repo = excluded.repo,
	config_path = excluded.config_path,
	state = CASE WHEN ?8 = '' THEN state ELSE excluded.state END,
	updated_at = excluded.updated_at`, nil,
			w.Project, w.Name, w.Branch, w.Path, w.Repo, w.ConfigPath, string(insertState), string(w.State), now)
		if err != nil {
			return err
		}
		ws, err := queryWorktrees(conn, "WHERE w.project = ? AND w.name = ?", w.Project, w.Name)
		if err != nil {
			return err
		}
		if len(ws) != 1 {
			return fmt.Errorf("read back: %w", ErrNotFound)
		}
		got = ws[0]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record worktree %s/%s: %w", w.Project, w.Name, err)
	}
	return got, nil
}

// Worktree returns the worktree name of project, or ErrNotFound.
func (r *Registry) Worktree(ctx context.Context, project, name string) (*Worktree, error) {
	return r.oneWorktree(ctx, fmt.Sprintf("%s/%s", project, name), "WHERE w.project = ? AND w.name = ?", project, name)
}

// WorktreeByID returns the worktree with id, or ErrNotFound.
func (r *Registry) WorktreeByID(ctx context.Context, id int64) (*Worktree, error) {
	return r.oneWorktree(ctx, fmt.Sprintf("#%d", id), "WHERE w.id = ?", id)
}

func (r *Registry) oneWorktree(ctx context.Context, what, where string, args ...any) (*Worktree, error) {
	var ws []*Worktree
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ws, err = queryWorktrees(conn, where, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("look up worktree %s: %w", what, err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("look up worktree %s: %w", what, ErrNotFound)
	}
	return ws[0], nil
}

// FindWorktree returns the worktrees, in any project, whose name or branch
// is nameOrBranch, ordered by project and name. None is not an error.
func (r *Registry) FindWorktree(ctx context.Context, nameOrBranch string) ([]*Worktree, error) {
	var ws []*Worktree
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ws, err = queryWorktrees(conn, "WHERE w.name = ?1 OR w.branch = ?1 ORDER BY w.project, w.name", nameOrBranch)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find worktree %q: %w", nameOrBranch, err)
	}
	return ws, nil
}

// Worktrees returns every worktree, ordered by project and name.
func (r *Registry) Worktrees(ctx context.Context) ([]*Worktree, error) {
	var ws []*Worktree
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ws, err = queryWorktrees(conn, "ORDER BY w.project, w.name")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	return ws, nil
}

// SetWorktreeState records the worktree's state; ErrNotFound when there is
// no worktree id, ErrUnknownState for a state the registry does not record
// (state.World.Recorded).
func (r *Registry) SetWorktreeState(ctx context.Context, id int64, st state.World) error {
	return r.SetWorktreeStateReason(ctx, id, st, "")
}

// SetWorktreeStateReason records a worktree's state and why it is in it
// (for failed, degraded and a down one left queued; "" clears it).
func (r *Registry) SetWorktreeStateReason(ctx context.Context, id int64, st state.World, reason string) error {
	if !st.Recorded() {
		return fmt.Errorf("set state of worktree #%d to %q: %w", id, st, ErrUnknownState)
	}
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		if err := execute(conn, "UPDATE worktrees SET state = ?, reason = ?, updated_at = ? WHERE id = ?", nil,
			string(st), reason, r.now().UnixNano(), id); err != nil {
			return err
		}
		if conn.Changes() == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set state of worktree #%d to %q: %w", id, st, err)
	}
	return nil
}

// DeleteWorktree removes the worktree with its services, verify runs and
// port block, in one transaction. Deleting a worktree that is gone is not an
// error.
func (r *Registry) DeleteWorktree(ctx context.Context, id int64) error {
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		ws, err := queryWorktrees(conn, "WHERE w.id = ?", id)
		if err != nil || len(ws) == 0 {
			return err
		}
		w := ws[0]
		// The foreign keys cascade too; deleting explicitly keeps this
		// right on a connection where they are off.
		for _, q := range []string{
			"DELETE FROM services WHERE worktree_id = ?",
			"DELETE FROM hosts WHERE worktree_id = ?",
			"DELETE FROM verify_runs WHERE worktree_id = ?",
			"DELETE FROM worktrees WHERE id = ?",
		} {
			if err := execute(conn, q, nil, id); err != nil {
				return err
			}
		}
		return execute(conn, "DELETE FROM port_blocks WHERE project = ? AND worktree = ?", nil, w.Project, w.Name)
	})
	if err != nil {
		return fmt.Errorf("delete worktree #%d: %w", id, err)
	}
	return nil
}

// IsNotFound reports whether err is, or wraps, ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
