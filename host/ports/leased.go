package ports

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/binkyhq/binky/host/registry"
)

// leaseView is the lease directory as one reservation sees it, under the
// lock.
type leaseView struct {
	// foreign are the blocks other homes hold: their live leases, the
	// leases of gone homes that could not be removed (another user's, in a
	// sticky directory), and lease files that cannot be read.
	foreign []*registry.PortBlock
	// mine are this home's leases that match a registry block, by worktree.
	mine map[string]*Lease
	// removed are this home's leases the registry did not have, and other
	// homes' leases whose home is gone; both were deleted.
	removed []Lease
}

func worldKey(project, worktree string) string { return project + "\x00" + worktree }

// isMine reports whether le was written by this home.
func (a *Allocator) isMine(le *Lease) bool {
	return le != nil && le.HomeID == a.homeID && le.HomeDir == a.homeDir
}

// view reads the lease directory; blocks are every block of this home's
// registry. Call with the lease lock (and, in a reservation, inside the
// registry transaction). This home's leases no block matches — left by a
// daemon killed between writing a lease and committing, or by a worktree
// deleted with its block — are deleted: with the lock held no reservation
// of this home is half done. A lease of another home is reclaimed (deleted)
// when that home is gone (homeGone); a live home's never is.
func (a *Allocator) view(blocks []*registry.PortBlock) (leaseView, error) {
	files, err := a.leases.read()
	if err != nil {
		return leaseView{}, err
	}
	byWorld := make(map[string]*registry.PortBlock, len(blocks))
	for _, b := range blocks {
		byWorld[worldKey(b.Project, b.Worktree)] = b
	}
	v := leaseView{mine: map[string]*Lease{}}
	for _, f := range files {
		le := f.lease
		switch {
		case a.isMine(le):
			k := worldKey(le.Project, le.Worktree)
			if b := byWorld[k]; b != nil && b.Lo == f.lo && b.Hi == f.hi {
				v.mine[k] = le
				continue
			}
			if a.leases.remove(f.name) != nil {
				// Written by another user of this home: held until they
				// (or root) remove it.
				v.foreign = append(v.foreign, leaseBlock(f))
				continue
			}
			v.removed = append(v.removed, *le)
		case le != nil && homeGone(le):
			if a.leases.remove(f.name) == nil {
				v.removed = append(v.removed, *le)
				continue
			}
			v.foreign = append(v.foreign, leaseBlock(f))
		default:
			v.foreign = append(v.foreign, leaseBlock(f))
		}
	}
	slices.SortFunc(v.foreign, func(x, y *registry.PortBlock) int { return x.Lo - y.Lo })
	return v, nil
}

// leaseBlock is a lease file as a block another home holds.
func leaseBlock(f leaseFile) *registry.PortBlock {
	b := &registry.PortBlock{Lo: f.lo, Hi: f.hi}
	if f.lease != nil {
		b.Project, b.Worktree, b.CreatedAt = f.lease.Project, f.lease.Worktree, f.lease.Created
	}
	return b
}

// newLease is this home's lease of lo..hi for a worktree.
func (a *Allocator) newLease(project, worktree string, lo, hi int) *Lease {
	return &Lease{
		Lo: lo, Hi: hi, UID: os.Getuid(),
		HomeID: a.homeID, HomeDir: a.homeDir,
		Project: project, Worktree: worktree,
		Pid: os.Getpid(), Created: time.Now().UTC(),
	}
}

// checkHome refuses to lease while this home's HomeIDFile does not hold its
// id: every other home would take such leases as a gone home's and reclaim
// them.
func (a *Allocator) checkHome() error {
	id, err := readHomeID(a.homeDir)
	if err != nil {
		return fmt.Errorf("this home's %s cannot be read (%w); the daemon writes it at start, and without it other binky homes would reclaim this home's port leases", filepath.Join(a.homeDir, HomeIDFile), err)
	}
	if id != a.homeID {
		return fmt.Errorf("this home's %s holds %q, not its id %q; the daemon writes it at start, and until it matches other binky homes would reclaim this home's port leases", filepath.Join(a.homeDir, HomeIDFile), id, a.homeID)
	}
	return nil
}

// reserveLeased is reserve with the lease store: the lease lock is held
// around the registry transaction, blocks other homes lease are skipped like
// those of other worktrees, and the chosen block is leased before the
// registry commits it.
func (a *Allocator) reserveLeased(ctx context.Context, project, worktree string, size int, rng [2]int, skipped *[]int) (*registry.PortBlock, bool, error) {
	unlock, err := a.leases.lock(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: %w", project, worktree, err)
	}
	defer unlock()
	if err := a.checkHome(); err != nil {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: %w", project, worktree, err)
	}
	var wrote *Lease             // the lease this reservation wrote
	var prev *registry.PortBlock // the worktree's block before it
	choose := func(own *registry.PortBlock, others []*registry.PortBlock) (int, int, error) {
		if wrote != nil { // the transaction runs choose again
			if err := a.leases.remove(leaseName(wrote.Lo, wrote.Hi)); err != nil {
				return 0, 0, err
			}
			wrote = nil
		}
		prev = own
		if skipped != nil {
			*skipped = (*skipped)[:0]
		}
		all := others
		if own != nil {
			all = append(slices.Clip(others), own)
		}
		v, err := a.view(all)
		if err != nil {
			return 0, 0, err
		}
		if own != nil && own.Size() >= size && own.Lo >= rng[0] && own.Hi <= rng[1] {
			if v.mine[worldKey(project, worktree)] != nil {
				return own.Lo, own.Hi, nil
			}
			// Its lease is missing (a block from before leases, or one a
			// crash lost): lease it again unless another home took any of
			// its ports meanwhile — then the world moves.
			if overlapping(v.foreign, own.Lo, own.Hi) == nil {
				le := a.newLease(project, worktree, own.Lo, own.Hi)
				if err := a.leases.write(le); err != nil {
					return 0, 0, err
				}
				wrote = le
				return own.Lo, own.Hi, nil
			}
		}
		lo, hi, err := a.search(ctx, others, v.foreign, size, rng, skipped)
		if err != nil {
			return 0, 0, err
		}
		le := a.newLease(project, worktree, lo, hi)
		if err := a.leases.write(le); err != nil {
			return 0, 0, err
		}
		wrote = le
		return lo, hi, nil
	}
	b, created, err := a.reg.ReservePortBlock(ctx, project, worktree, choose)
	if err != nil {
		if wrote != nil {
			_ = a.leases.remove(leaseName(wrote.Lo, wrote.Hi))
		}
		return nil, false, err
	}
	if prev != nil && (prev.Lo != b.Lo || prev.Hi != b.Hi) {
		// The world moved: its old block's lease goes.
		_ = a.removeMine(prev.Lo, prev.Hi, project, worktree)
	}
	return b, created, nil
}

// removeMine deletes the lease of lo..hi if it is this home's lease for the
// worktree. Call with the lock.
func (a *Allocator) removeMine(lo, hi int, project, worktree string) error {
	name := leaseName(lo, hi)
	le := readLease(filepath.Join(a.leases.dir, name), lo, hi)
	if !a.isMine(le) || le.Project != project || le.Worktree != worktree {
		return nil
	}
	return a.leases.remove(name)
}

// dropLeases deletes every lease of this home for the worktree. Call with
// the lock.
func (a *Allocator) dropLeases(project, worktree string) error {
	files, err := a.leases.read()
	if err != nil {
		return err
	}
	for _, f := range files {
		if a.isMine(f.lease) && f.lease.Project == project && f.lease.Worktree == worktree {
			if err := a.leases.remove(f.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// LeaseSync is what SyncLeases did.
type LeaseSync struct {
	// Removed are this home's leases the registry no longer has, and
	// leases of gone homes that were reclaimed.
	Removed []Lease
	// Leased are registry blocks that had no lease and now have one.
	Leased []*registry.PortBlock
	// Contested are registry blocks without a lease that another home
	// leases (some of) meanwhile: their worlds move to a new block at
	// their next up.
	Contested []*registry.PortBlock
}

// SyncLeases brings the lease store in line with this home's registry, for
// the daemon at start: it deletes this home's leases the registry no longer
// has (a worktree removed while no lease lock was held, a daemon killed
// mid-reservation), reclaims gone homes' leases, removes temporary files a
// killed writer left, and leases every registry block that has no lease yet
// (blocks reserved before leases existed) unless another home leases some
// of its ports. Without Options.Leases it does nothing.
func (a *Allocator) SyncLeases(ctx context.Context) (LeaseSync, error) {
	var out LeaseSync
	if a.leases == nil {
		return out, nil
	}
	unlock, err := a.leases.lock(ctx)
	if err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	defer unlock()
	if err := a.checkHome(); err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	blocks, err := a.reg.PortBlocks(ctx)
	if err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	a.leases.removeTemps()
	v, err := a.view(blocks)
	if err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	out.Removed = v.removed
	for _, b := range blocks {
		if v.mine[worldKey(b.Project, b.Worktree)] != nil {
			continue
		}
		if overlapping(v.foreign, b.Lo, b.Hi) != nil {
			out.Contested = append(out.Contested, b)
			continue
		}
		if err := a.leases.write(a.newLease(b.Project, b.Worktree, b.Lo, b.Hi)); err != nil {
			return out, fmt.Errorf("sync port leases: %w", err)
		}
		out.Leased = append(out.Leased, b)
	}
	return out, nil
}
