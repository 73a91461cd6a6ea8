package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/binkyhq/binky/host/state"
)

// Service kinds.
const (
	KindCmd     = "cmd"
	KindAdapter = "adapter"
)

// Service is one service of a worktree: a supervised process (cmd) or an
// adapter's slice.
type Service struct {
	WorktreeID int64
	Name       string
	Kind       string // KindCmd or KindAdapter
	// State is one of host/state's service states; "" only for a service
	// recorded without one (UpsertService keeps the recorded one then).
	State state.Service
	// PID and PGID identify the running process and its group; StartTime is
	// the process's start time in clock ticks since boot (from
	// /proc/<pid>/stat on Linux), which guards against pid reuse.
	PID, PGID int
	StartTime uint64
	// Ports maps each port name to its port; the first name is the one
	// ${self.port} means.
	Ports map[string]int
	URL   string // the proxied URL, when the service asked for one
	// Address is an adapter's resolved address. It may hold credentials:
	// redact it before showing it.
	Address      string
	Values       map[string]string // an adapter's extra values
	Restarts     int
	LastExitCode *int
	LastError    string
	UpdatedAt    time.Time
	// Spec is the supervisor's run spec of a cmd service (JSON), so a later
	// daemon can re-adopt or restart it. Set by SetServiceSpec.
	Spec string
	// Slice and Adapter name an adapter service's slice and the adapter
	// that made it, recorded before the slice is made. UpsertService keeps
	// the recorded ones when s leaves them empty.
	Slice, Adapter string
	// Admin and Config are an adapter service's admin_url and config table
	// (JSON) as binky.toml wrote them, tokens unresolved, recorded with the
	// slice so remove can reach it after the service left binky.toml.
	// UpsertService keeps the recorded ones when s leaves them empty.
	Admin, Config string
	// SpecHash is a cmd service's rendered spec, hashed, as it last
	// started (host/world); UpsertService keeps the recorded one when s
	// leaves it empty.
	SpecHash string
	// GoldenKey is the golden template key an adapter service's slice was
	// cloned from, and MigrateSum a hash of the migrate inputs last applied
	// to the slice (host/world); UpsertService keeps the recorded ones when
	// s leaves them empty.
	GoldenKey, MigrateSum string
	// Stopped is true while the user has stopped this one service (`binky
	// stop <service>`): up leaves it stopped. UpsertService writes it only
	// for a new service; SetServiceStopped changes it.
	Stopped bool
}

const serviceSelect = `SELECT worktree_id, name, kind, state, pid, pgid, start_time,
	ports, url, address, vals, restarts, last_exit_code, last_error, updated_at, spec, slice, adapter,
	admin, config, spec_hash, golden_key, migrate_sum, stopped
FROM services
`

func scanService(stmt *sqlite.Stmt) (*Service, error) {
	s := &Service{
		WorktreeID: stmt.ColumnInt64(0),
		Name:       stmt.ColumnText(1),
		Kind:       stmt.ColumnText(2),
		State:      state.Service(stmt.ColumnText(3)),
		PID:        stmt.ColumnInt(4),
		PGID:       stmt.ColumnInt(5),
		StartTime:  uint64(stmt.ColumnInt64(6)),
		URL:        stmt.ColumnText(8),
		Address:    stmt.ColumnText(9),
		Restarts:   stmt.ColumnInt(11),
		LastError:  stmt.ColumnText(13),
		UpdatedAt:  fromUnixNano(stmt.ColumnInt64(14)),
		Spec:       stmt.ColumnText(15),
		Slice:      stmt.ColumnText(16),
		Adapter:    stmt.ColumnText(17),
		Admin:      stmt.ColumnText(18),
		Config:     stmt.ColumnText(19),
		SpecHash:   stmt.ColumnText(20),
		GoldenKey:  stmt.ColumnText(21),
		MigrateSum: stmt.ColumnText(22),
		Stopped:    stmt.ColumnInt(23) != 0,
	}
	if !stmt.ColumnIsNull(12) {
		c := stmt.ColumnInt(12)
		s.LastExitCode = &c
	}
	if err := json.Unmarshal([]byte(stmt.ColumnText(7)), &s.Ports); err != nil {
		return nil, fmt.Errorf("decode ports of service %s: %w", s.Name, err)
	}
	if err := json.Unmarshal([]byte(stmt.ColumnText(10)), &s.Values); err != nil {
		return nil, fmt.Errorf("decode values of service %s: %w", s.Name, err)
	}
	return s, nil
}

func queryServices(conn *sqlite.Conn, where string, args ...any) ([]*Service, error) {
	var out []*Service
	err := execute(conn, serviceSelect+where, func(stmt *sqlite.Stmt) error {
		s, err := scanService(stmt)
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}, args...)
	return out, err
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if string(b) == "null" {
		return "{}", nil
	}
	return string(b), nil
}

func nullableInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

// UpsertService records a service, keyed by (WorktreeID, Name). A new one is
// written whole. An existing one gets s's definition — Kind, Ports, URL,
// Address, Values — and, when State is not empty, its state; Slice,
// Adapter, Admin, Config, SpecHash, GoldenKey and MigrateSum when s sets
// them. Its process (PID, PGID, StartTime), Restarts, last exit and
// Stopped are kept, as they change only through SetServiceProcess,
// SetServiceState, IncRestarts and SetServiceStopped.
func (r *Registry) UpsertService(ctx context.Context, s *Service) error {
	if s.WorktreeID == 0 || s.Name == "" {
		return fmt.Errorf("record service %q of worktree #%d: worktree and name are required", s.Name, s.WorktreeID)
	}
	if s.Kind != KindCmd && s.Kind != KindAdapter {
		return fmt.Errorf("record service %q of worktree #%d: kind is %q; want %q or %q", s.Name, s.WorktreeID, s.Kind, KindCmd, KindAdapter)
	}
	if s.State != "" && !s.State.Valid() {
		return fmt.Errorf("record service %q of worktree #%d in state %q: %w", s.Name, s.WorktreeID, s.State, ErrUnknownState)
	}
	ports, err := jsonText(s.Ports)
	if err != nil {
		return fmt.Errorf("record service %q of worktree #%d: encode ports: %w", s.Name, s.WorktreeID, err)
	}
	vals, err := jsonText(s.Values)
	if err != nil {
		return fmt.Errorf("record service %q of worktree #%d: encode values: %w", s.Name, s.WorktreeID, err)
	}
	err = r.write(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, `INSERT INTO services
	(worktree_id, name, kind, state, pid, pgid, start_time, ports, url, address,
	 vals, restarts, last_exit_code, last_error, updated_at, slice, adapter, admin, config, spec_hash,
	 golden_key, migrate_sum, stopped)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)
ON CONFLICT (worktree_id, name) DO UPDATE SET
	kind = excluded.kind, ports = excluded.ports, url = excluded.url,
	address = excluded.address, vals = excluded.vals,
	slice = CASE WHEN excluded.slice = '' THEN slice ELSE excluded.slice END,
	adapter = CASE WHEN excluded.adapter = '' THEN adapter ELSE excluded.adapter END,
	admin = CASE WHEN excluded.admin = '' THEN admin ELSE excluded.admin END,
	config = CASE WHEN excluded.config = '' THEN config ELSE excluded.config END,
	spec_hash = CASE WHEN excluded.spec_hash = '' THEN spec_hash ELSE excluded.spec_hash END,
	golden_key = CASE WHEN excluded.golden_key = '' THEN golden_key ELSE excluded.golden_key END,
	migrate_sum = CASE WHEN excluded.migrate_sum = '' THEN migrate_sum ELSE excluded.migrate_sum END,
	state = CASE WHEN excluded.state = '' THEN state ELSE excluded.state END,
	updated_at = excluded.updated_at`, nil,
			s.WorktreeID, s.Name, s.Kind, string(s.State), s.PID, s.PGID, int64(s.StartTime),
			ports, s.URL, s.Address, vals, s.Restarts, nullableInt(s.LastExitCode),
			s.LastError, r.now().UnixNano(), s.Slice, s.Adapter, s.Admin, s.Config, s.SpecHash,
			s.GoldenKey, s.MigrateSum, s.Stopped)
	})
	if err != nil {
		return fmt.Errorf("record service %q of worktree #%d: %w", s.Name, s.WorktreeID, err)
	}
	return nil
}

// Service returns one service, or ErrNotFound.
func (r *Registry) Service(ctx context.Context, worktreeID int64, name string) (*Service, error) {
	var ss []*Service
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ss, err = queryServices(conn, "WHERE worktree_id = ? AND name = ?", worktreeID, name)
		return err
	})
	if err == nil && len(ss) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("look up service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return ss[0], nil
}

// Services returns a worktree's services, ordered by name.
func (r *Registry) Services(ctx context.Context, worktreeID int64) ([]*Service, error) {
	var ss []*Service
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ss, err = queryServices(conn, "WHERE worktree_id = ? ORDER BY name", worktreeID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list services of worktree #%d: %w", worktreeID, err)
	}
	return ss, nil
}

// AllServices returns every service of every worktree, ordered by worktree
// id and name: what a starting daemon reconciles.
func (r *Registry) AllServices(ctx context.Context) ([]*Service, error) {
	var ss []*Service
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		ss, err = queryServices(conn, "ORDER BY worktree_id, name")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	return ss, nil
}

// DeleteService forgets a service (one dropped from binky.toml). Deleting one
// that is gone is not an error.
func (r *Registry) DeleteService(ctx context.Context, worktreeID int64, name string) error {
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, "DELETE FROM services WHERE worktree_id = ? AND name = ?", nil, worktreeID, name)
	})
	if err != nil {
		return fmt.Errorf("delete service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return nil
}

// SetServiceProcess records the process now running a service and its state
// (usually starting, or running for an adopted one).
func (r *Registry) SetServiceProcess(ctx context.Context, worktreeID int64, name string, pid, pgid int, startTime uint64, st state.Service) error {
	err := checkService(st)
	if err == nil {
		err = r.updateService(ctx, worktreeID, name,
			"pid = ?, pgid = ?, start_time = ?, state = ?", pid, pgid, int64(startTime), string(st))
	}
	if err != nil {
		return fmt.Errorf("record process %d of service %q of worktree #%d: %w", pid, name, worktreeID, err)
	}
	return nil
}

// SetServiceSpec records a cmd service's run spec (JSON).
func (r *Registry) SetServiceSpec(ctx context.Context, worktreeID int64, name, spec string) error {
	if err := r.updateService(ctx, worktreeID, name, "spec = ?", spec); err != nil {
		return fmt.Errorf("record spec of service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return nil
}

// SetServiceURL records a service's proxied URL (its url column only, and
// the time of the change): when https or the proxy's address changes
// without anything else about the service.
func (r *Registry) SetServiceURL(ctx context.Context, worktreeID int64, name, url string) error {
	if err := r.updateService(ctx, worktreeID, name, "url = ?", url); err != nil {
		return fmt.Errorf("record url of service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return nil
}

// SetServiceInputs records what an adapter service's slice was made
// from: the golden key it was cloned from and the sum of the migrate last
// run against it (host/world). An empty value keeps the recorded one.
func (r *Registry) SetServiceInputs(ctx context.Context, worktreeID int64, name, goldenKey, migrateSum string) error {
	set := "golden_key = CASE WHEN ? = '' THEN golden_key ELSE ? END, migrate_sum = CASE WHEN ? = '' THEN migrate_sum ELSE ? END"
	if err := r.updateService(ctx, worktreeID, name, set, goldenKey, goldenKey, migrateSum, migrateSum); err != nil {
		return fmt.Errorf("record what the slice of service %q of worktree #%d was made from: %w", name, worktreeID, err)
	}
	return nil
}

// SetServiceStopped records whether the user stopped this one service
// (`binky stop <service>`, and up or start bringing it back); nothing
// else changes it.
func (r *Registry) SetServiceStopped(ctx context.Context, worktreeID int64, name string, stopped bool) error {
	if err := r.updateService(ctx, worktreeID, name, "stopped = ?", stopped); err != nil {
		return fmt.Errorf("record service %q of worktree #%d as stopped=%v: %w", name, worktreeID, stopped, err)
	}
	return nil
}

// SetServiceState records a service's state. exitCode, when not nil, becomes
// its last exit code, and errText, when not empty, its last error; otherwise
// those are kept. Entering a state without a process (state.Service.Ended:
// stopped, exited, failed, lost) clears the recorded pid, group and start
// time, so a stale pid is never signalled.
func (r *Registry) SetServiceState(ctx context.Context, worktreeID int64, name string, st state.Service, exitCode *int, errText string) error {
	set := "state = ?, last_exit_code = COALESCE(?, last_exit_code), last_error = CASE WHEN ? = '' THEN last_error ELSE ? END"
	if st.Ended() {
		set += ", pid = 0, pgid = 0, start_time = 0"
	}
	err := checkService(st)
	if err == nil {
		err = r.updateService(ctx, worktreeID, name, set, string(st), nullableInt(exitCode), errText, errText)
	}
	if err != nil {
		return fmt.Errorf("set state of service %q of worktree #%d to %q: %w", name, worktreeID, st, err)
	}
	return nil
}

// checkService is ErrUnknownState for a state that is not one of
// host/state's service states.
func checkService(st state.Service) error {
	if !st.Valid() {
		return ErrUnknownState
	}
	return nil
}

// IncRestarts adds one to a service's restart count and returns the new
// count.
func (r *Registry) IncRestarts(ctx context.Context, worktreeID int64, name string) (int, error) {
	n := 0
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		err := execute(conn, "UPDATE services SET restarts = restarts + 1, updated_at = ? WHERE worktree_id = ? AND name = ? RETURNING restarts",
			func(stmt *sqlite.Stmt) error {
				n = stmt.ColumnInt(0)
				return nil
			}, r.now().UnixNano(), worktreeID, name)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count a restart of service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return n, nil
}

// ResetRestarts sets a service's restart count to zero (a fresh `up`, or a
// run that stayed up for the stable window).
func (r *Registry) ResetRestarts(ctx context.Context, worktreeID int64, name string) error {
	if err := r.updateService(ctx, worktreeID, name, "restarts = 0"); err != nil {
		return fmt.Errorf("reset restarts of service %q of worktree #%d: %w", name, worktreeID, err)
	}
	return nil
}

func (r *Registry) updateService(ctx context.Context, worktreeID int64, name, set string, args ...any) error {
	return r.write(ctx, func(conn *sqlite.Conn) error {
		args = append(args, r.now().UnixNano(), worktreeID, name)
		if err := execute(conn, "UPDATE services SET "+set+", updated_at = ? WHERE worktree_id = ? AND name = ?", nil, args...); err != nil {
			return err
		}
		if conn.Changes() == 0 {
			return ErrNotFound
		}
		return nil
	})
}
