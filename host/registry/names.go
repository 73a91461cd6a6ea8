package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"
)

// ErrNameTaken is wrapped by ClaimStableName and ClaimHosts when the name
// asked for is another world's.
var ErrNameTaken = errors.New("name held by another world")

// Holder is a world that holds a name.
type Holder struct {
	Name     string // the stable name or hostname
	Project  string
	Worktree string
	Service  string // for a hostname: the service served there
}

// TakenError says which names another world holds; it wraps ErrNameTaken.
type TakenError struct {
	What    string // "stable name" or "hostname"
	Holders []Holder
}

func (e *TakenError) Error() string {
	parts := make([]string, len(e.Holders))
	for i, h := range e.Holders {
		parts[i] = h.Name + " (" + h.Project + "/" + h.Worktree
		if h.Service != "" {
			parts[i] += ", service " + h.Service
		}
		parts[i] += ")"
	}
	return e.What + " held by another world: " + strings.Join(parts, ", ")
}

func (e *TakenError) Unwrap() error { return ErrNameTaken }

// ClaimStableName hands the world id a name of set and records it: the
// one it holds when that is in set, else the first of set no other world
// of its project holds. An empty set clears the world's name. When every
// name is held the error is a *TakenError naming the holders. It runs in
// one write transaction, so two ups at once never get the same name.
func (r *Registry) ClaimStableName(ctx context.Context, id int64, set []string) (string, error) {
	var got string
	err := r.write(ctx, func(conn *sqlite.Conn) (err error) {
		got, err = claimStableName(conn, id, set)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("hand worktree #%d a stable name: %w", id, err)
	}
	return got, nil
}

// ClaimNames is ClaimStableName then ClaimHosts in one write transaction:
// hosts makes the world's hostnames from the stable name it gets. When
// either claim fails (every stable name held, a hostname another world
// holds, hosts' own error), nothing changes: a world an up refused does
// not keep a stable name the next world could have had.
func (r *Registry) ClaimNames(ctx context.Context, id int64, set []string, hosts func(stable string) (map[string]string, error)) (string, error) {
	var got string
	err := r.write(ctx, func(conn *sqlite.Conn) (err error) {
		if got, err = claimStableName(conn, id, set); err != nil {
			return err
		}
		hs, err := hosts(got)
		if err != nil {
			return err
		}
		return claimHosts(conn, id, hs)
	})
	if err != nil {
		return "", fmt.Errorf("claim the names of worktree #%d: %w", id, err)
	}
	return got, nil
}

func claimStableName(conn *sqlite.Conn, id int64, set []string) (string, error) {
	ws, err := queryWorktrees(conn, "WHERE w.id = ?", id)
	if err != nil {
		return "", err
	}
	if len(ws) == 0 {
		return "", ErrNotFound
	}
	w := ws[0]
	if slices.Contains(set, w.StableName) {
		return w.StableName, nil
	}
	held := map[string]string{}
	err = execute(conn, "SELECT stable_name, name FROM worktrees WHERE project = ? AND stable_name <> '' AND id <> ?", func(stmt *sqlite.Stmt) error {
		held[stmt.ColumnText(0)] = stmt.ColumnText(1)
		return nil
	}, w.Project, id)
	if err != nil {
		return "", err
	}
	got := ""
	for _, n := range set {
		if _, ok := held[n]; !ok {
			got = n
			break
		}
	}
	if got == "" && len(set) > 0 {
		te := &TakenError{What: "every stable name is"}
		for _, n := range set {
			te.Holders = append(te.Holders, Holder{Name: n, Project: w.Project, Worktree: held[n]})
		}
		return "", te
	}
	return got, execute(conn, "UPDATE worktrees SET stable_name = ? WHERE id = ?", nil, got, id)
}

// ClaimHosts records hosts (hostname → service) as the world id's whole
// set of hostnames, freeing those it held and no longer has. A hostname
// another world holds, in any project of the home, fails the claim with a
// *TakenError naming that world, and nothing changes. DeleteWorktree frees
// a world's hostnames.
func (r *Registry) ClaimHosts(ctx context.Context, id int64, hosts map[string]string) error {
	err := r.write(ctx, func(conn *sqlite.Conn) error { return claimHosts(conn, id, hosts) })
	if err != nil {
		return fmt.Errorf("claim the hostnames of worktree #%d: %w", id, err)
	}
	return nil
}

func claimHosts(conn *sqlite.Conn, id int64, hosts map[string]string) error {
	var taken []Holder
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		err := execute(conn, `SELECT w.project, w.name, h.service FROM hosts h JOIN worktrees w ON w.id = h.worktree_id
WHERE h.host = ? AND h.worktree_id <> ?`, func(stmt *sqlite.Stmt) error {
			taken = append(taken, Holder{Name: h, Project: stmt.ColumnText(0), Worktree: stmt.ColumnText(1), Service: stmt.ColumnText(2)})
			return nil
		}, h, id)
		if err != nil {
			return err
		}
	}
	if len(taken) > 0 {
		return &TakenError{What: "hostname", Holders: taken}
	}
	if err := execute(conn, "DELETE FROM hosts WHERE worktree_id = ?", nil, id); err != nil {
		return err
	}
	for h, svc := range hosts {
		// A row left by a world that is gone (its foreign key off)
		// is replaced.
		if err := execute(conn, "INSERT OR REPLACE INTO hosts (host, worktree_id, service) VALUES (?, ?, ?)", nil, h, id, svc); err != nil {
			return err
		}
	}
	return nil
}

// Hosts returns the hostnames the world id holds, hostname → service.
func (r *Registry) Hosts(ctx context.Context, id int64) (map[string]string, error) {
	out := map[string]string{}
	err := r.read(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, "SELECT host, service FROM hosts WHERE worktree_id = ?", func(stmt *sqlite.Stmt) error {
			out[stmt.ColumnText(0)] = stmt.ColumnText(1)
			return nil
		}, id)
	})
	if err != nil {
		return nil, fmt.Errorf("read the hostnames of worktree #%d: %w", id, err)
	}
	return out, nil
}
