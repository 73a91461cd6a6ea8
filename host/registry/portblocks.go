package registry

import (
	"context"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
)

// PortBlock is a run of consecutive ports reserved for one worktree. Blocks
// never overlap: the database refuses an overlapping one.
type PortBlock struct {
	Project   string
	Worktree  string // the worktree name
	Lo, Hi    int    // inclusive
	CreatedAt time.Time
}

// Size is the number of ports in the block.
func (b *PortBlock) Size() int { return b.Hi - b.Lo + 1 }

// Overlaps reports whether b shares a port with lo..hi.
func (b *PortBlock) Overlaps(lo, hi int) bool { return b.Lo <= hi && lo <= b.Hi }

const portBlockSelect = "SELECT project, worktree, lo, hi, created_at FROM port_blocks "

func queryPortBlocks(conn *sqlite.Conn, where string, args ...any) ([]*PortBlock, error) {
	var out []*PortBlock
	err := execute(conn, portBlockSelect+where, func(stmt *sqlite.Stmt) error {
		out = append(out, &PortBlock{
			Project:   stmt.ColumnText(0),
			Worktree:  stmt.ColumnText(1),
			Lo:        stmt.ColumnInt(2),
			Hi:        stmt.ColumnInt(3),
			CreatedAt: fromUnixNano(stmt.ColumnInt64(4)),
		})
		return nil
	}, args...)
	return out, err
}

// PortBlock returns a worktree's port block, or ErrNotFound.
func (r *Registry) PortBlock(ctx context.Context, project, worktree string) (*PortBlock, error) {
	var bs []*PortBlock
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		bs, err = queryPortBlocks(conn, "WHERE project = ? AND worktree = ?", project, worktree)
		return err
	})
	if err == nil && len(bs) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("look up port block of %s/%s: %w", project, worktree, err)
	}
	return bs[0], nil
}

// PortBlocks returns every port block, ordered by first port.
func (r *Registry) PortBlocks(ctx context.Context) ([]*PortBlock, error) {
	var bs []*PortBlock
	err := r.read(ctx, func(conn *sqlite.Conn) (err error) {
		bs, err = queryPortBlocks(conn, "ORDER BY lo")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list port blocks: %w", err)
	}
	return bs, nil
}

// ChooseFunc picks a worktree's port block, given its current block (nil
// when it has none) and every other worktree's block ordered by first port.
// Returning the current block's bounds keeps it.
type ChooseFunc func(own *PortBlock, others []*PortBlock) (lo, hi int, err error)

// ReservePortBlock gives a worktree the block choose picks. The whole
// exchange runs in one BEGIN IMMEDIATE transaction, so no other reservation,
// in this process or another, can take the same ports meanwhile; and the
// database refuses a block that overlaps another (ErrPortBlockOverlap),
// whatever choose returns. It reports the block and whether it is new.
func (r *Registry) ReservePortBlock(ctx context.Context, project, worktree string, choose ChooseFunc) (*PortBlock, bool, error) {
	if project == "" || worktree == "" {
		return nil, false, fmt.Errorf("reserve port block of %q/%q: project and worktree are required", project, worktree)
	}
	var got *PortBlock
	created := false
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		all, err := queryPortBlocks(conn, "ORDER BY lo")
		if err != nil {
			return err
		}
		var own *PortBlock
		others := make([]*PortBlock, 0, len(all))
		for _, b := range all {
			if b.Project == project && b.Worktree == worktree {
				own = b
			} else {
				others = append(others, b)
			}
		}
		lo, hi, err := choose(own, others)
		if err != nil {
			return err
		}
		if own != nil && own.Lo == lo && own.Hi == hi {
			got = own
			return nil
		}
		if own != nil {
			if err := execute(conn, "DELETE FROM port_blocks WHERE project = ? AND worktree = ?", nil, project, worktree); err != nil {
				return err
			}
		}
		now := r.now()
		err = execute(conn, "INSERT INTO port_blocks (project, worktree, lo, hi, created_at) VALUES (?, ?, ?, ?, ?)", nil,
			project, worktree, lo, hi, now.UnixNano())
		if sqlite.ErrCode(err) == sqlite.ResultConstraintTrigger {
			return fmt.Errorf("%w: %d-%d", ErrPortBlockOverlap, lo, hi)
		}
		if err != nil {
			return err
		}
		got = &PortBlock{Project: project, Worktree: worktree, Lo: lo, Hi: hi, CreatedAt: fromUnixNano(now.UnixNano())}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("reserve port block of %s/%s: %w", project, worktree, err)
	}
	return got, created, nil
}

// ReleasePortBlock gives back a worktree's port block and returns it; nil
// when it had none.
func (r *Registry) ReleasePortBlock(ctx context.Context, project, worktree string) (*PortBlock, error) {
	var got *PortBlock
	err := r.write(ctx, func(conn *sqlite.Conn) error {
		return execute(conn, "DELETE FROM port_blocks WHERE project = ? AND worktree = ? RETURNING project, worktree, lo, hi, created_at",
			func(stmt *sqlite.Stmt) error {
				got = &PortBlock{
					Project:   stmt.ColumnText(0),
					Worktree:  stmt.ColumnText(1),
					Lo:        stmt.ColumnInt(2),
					Hi:        stmt.ColumnInt(3),
					CreatedAt: fromUnixNano(stmt.ColumnInt64(4)),
				}
				return nil
			}, project, worktree)
	})
	if err != nil {
		return nil, fmt.Errorf("release port block of %s/%s: %w", project, worktree, err)
	}
	return got, nil
}
