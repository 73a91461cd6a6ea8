package ports

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/registry"
)

// maxRaces bounds how often one reservation backs off from a block
// another user's home leased at the same moment.
const maxRaces = 8

// leaseView is the lease store as one reservation sees it, under this
// user's lock.
type leaseView struct {
	// foreign are the blocks other homes hold: the leases whose claims
	// hold (leaseclaim.go), every user's.
	foreign []*registry.PortBlock
	// mine are this home's leases that match a registry block, by world.
	mine map[string]*Lease
	// removed are this home's leases the registry did not have, and this
	// user's leases whose homes are gone; both were deleted.
	removed []Lease
	// ignored are the lease files that count for nothing (at most
	// maxIgnored; omitted counts the others).
	ignored []IgnoredLease
	omitted int
}

func worldKey(project, worktree string) string { return project + "\x00" + worktree }

// isMine reports whether le was written by this home (and this user).
func (a *Allocator) isMine(le *Lease) bool {
	return le != nil && le.HomeID == a.homeID && le.HomeDir == a.homeDir && leaseOwner(le) == a.me
}

// view reads the lease store; blocks are every block of this home's
// registry. Call with the lease lock (and, in a reservation, inside the
// registry transaction). This home's leases no block matches — left by a
// daemon killed between writing a lease and committing, or by a worktree
// deleted with its block — are deleted: with the lock held no reservation
// of this home is half done. This user's leases whose homes are gone are
// deleted too; another user's are only ignored (no one but their owner may
// delete them).
func (a *Allocator) view(blocks []*registry.PortBlock) (leaseView, error) {
	s, err := a.leases.scan("")
	if err != nil {
		return leaseView{}, err
	}
	byWorld := make(map[string]*registry.PortBlock, len(blocks))
	for _, b := range blocks {
		byWorld[worldKey(b.Project, b.Worktree)] = b
	}
	v := leaseView{mine: map[string]*Lease{}}
	for _, e := range s.valid {
		le := e.lease
		if a.isMine(le) {
			k := worldKey(le.Project, le.Worktree)
			if b := byWorld[k]; b != nil && b.Lo == le.Lo && b.Hi == le.Hi {
				v.mine[k] = le
				continue
			}
			if remove(e.path) == nil {
				v.removed = append(v.removed, *le)
				continue
			}
		}
		v.foreign = append(v.foreign, leaseBlock(le))
	}
	for _, e := range s.stale {
		if e.owner == a.me && remove(e.path) == nil {
			v.removed = append(v.removed, *e.lease)
			continue
		}
		s.ignore(IgnoredLease{Path: e.path, Owner: e.owner, Reason: e.why})
	}
	v.ignored, v.omitted = s.ignored, s.omitted
	slices.SortFunc(v.foreign, func(x, y *registry.PortBlock) int { return x.Lo - y.Lo })
	slices.SortFunc(v.ignored, func(x, y IgnoredLease) int { return strings.Compare(x.Path, y.Path) })
	a.setIgnored(v.ignored, v.omitted)
	return v, nil
}

// rivals re-reads every lease outside this user's subdirectory sub and
// returns those whose claims hold and that overlap lo..hi: a home of
// another user that leased some of these ports while this one did.
func (a *Allocator) rivals(sub string, lo, hi int) ([]*registry.PortBlock, error) {
	s, err := a.leases.scan(sub)
	if err != nil {
		return nil, err
	}
	var out []*registry.PortBlock
	for _, e := range s.valid {
		if e.lease.Hi >= lo && e.lease.Lo <= hi && !a.isMine(e.lease) {
			out = append(out, leaseBlock(e.lease))
		}
	}
	return out, nil
}

// setIgnored records what the last view ignored.
func (a *Allocator) setIgnored(ig []IgnoredLease, omitted int) {
	a.ignoredMu.Lock()
	a.ignored, a.ignoredTotal = slices.Clone(ig), len(ig)+omitted
	a.ignoredMu.Unlock()
}

// IgnoredLeases are the lease files the last reservation (or SyncLeases)
// found and did not count — each names the file, its owner and why, for
// up to report — and how many there were: the list holds at most 100.
func (a *Allocator) IgnoredLeases() (list []IgnoredLease, total int) {
	a.ignoredMu.Lock()
	defer a.ignoredMu.Unlock()
	return slices.Clone(a.ignored), a.ignoredTotal
}

// leaseBlock is a lease as a block another home holds.
func leaseBlock(le *Lease) *registry.PortBlock {
	return &registry.PortBlock{Lo: le.Lo, Hi: le.Hi, Project: le.Project, Worktree: le.Worktree, CreatedAt: le.Created}
}

// newLease is this home's lease of lo..hi for a worktree.
func (a *Allocator) newLease(project, worktree string, lo, hi int) *Lease {
	le := &Lease{
		Lo: lo, Hi: hi,
		HomeID: a.homeID, HomeDir: a.homeDir,
		Project: project, Worktree: worktree,
		Pid: a.pid, PidStart: a.pidStart, Created: time.Now().UTC(),
	}
	stampOwner(le, a.me)
	return le
}

// checkHome refuses to lease while this home's HomeIDFile does not hold its
// id: every other home would take such leases as a gone home's and ignore
// them.
func (a *Allocator) checkHome() error {
	id, err := readHomeID(a.homeDir)
	if err != nil {
		return fmt.Errorf("this home's %s cannot be read (%w); the daemon writes it at start, and without it other binky homes would take this home's port leases for a gone home's", filepath.Join(a.homeDir, HomeIDFile), err)
	}
	if id != a.homeID {
		return fmt.Errorf("this home's %s holds %q, not its id %q; the daemon writes it at start, and until it matches other binky homes would take this home's port leases for a gone home's", filepath.Join(a.homeDir, HomeIDFile), id, a.homeID)
	}
	return nil
}

// lease writes this home's lease of lo..hi in sub and re-reads every
// other user's leases: when another home leased some of those ports at
// the same moment, this lease is removed again and the rivals are
// returned. Of two homes racing, at least one sees the other (each reads
// after its own write), so they never both keep overlapping leases; both
// may back off. It returns the lease's path, "" when it was removed
// again.
func (a *Allocator) lease(sub, project, worktree string, lo, hi int) (string, error) {
	le := a.newLease(project, worktree, lo, hi)
	if err := a.leases.write(sub, le); err != nil {
		return "", err
	}
	path := filepath.Join(sub, leaseName(lo, hi))
	if a.afterWrite != nil {
		a.afterWrite(lo, hi)
	}
	rivals, err := a.rivals(sub, lo, hi)
	if err == nil && len(rivals) == 0 {
		return path, nil
	}
	if rerr := remove(path); rerr != nil && err == nil {
		err = rerr
	}
	return "", err
}

// reserveLeased is reserve with the lease store: this user's lease lock
// is held around the registry transaction, blocks other homes lease are
// skipped like those of other worktrees, and the chosen block is leased
// (and checked against other users' leases) before the registry commits
// it.
func (a *Allocator) reserveLeased(ctx context.Context, project, worktree string, size int, rng [2]int, skipped *[]int) (*registry.PortBlock, bool, error) {
	sub, unlock, err := a.leases.lock(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: %w", project, worktree, err)
	}
	defer unlock()
	if err := a.checkHome(); err != nil {
		return nil, false, fmt.Errorf("reserve ports for %s/%s: %w", project, worktree, err)
	}
	if !a.synced.Load() {
		// SyncLeases did not get through at daemon start: it runs
		// here, with the lock already held; its failure is not this
		// reservation's.
		_, _ = a.syncLocked(ctx, sub)
	}
	var wrote string             // the lease this reservation wrote
	var prev *registry.PortBlock // the worktree's block before it
	choose := func(own *registry.PortBlock, others []*registry.PortBlock) (int, int, error) {
		if wrote != "" { // the transaction runs choose again
			if err := remove(wrote); err != nil {
				return 0, 0, err
			}
			wrote = ""
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
		keep := own != nil && own.Size() >= size && own.Size() <= MaxBlock && own.Lo >= rng[0] && own.Hi <= rng[1]
		if keep && v.mine[worldKey(project, worktree)] != nil {
			return own.Lo, own.Hi, nil
		}
		taken := slices.Clip(v.foreign)
		from := rng[0] // where the search starts
		for try := 1; ; try++ {
			var lo, hi int
			grew := false
			if own != nil && !keep {
				hi, grew = a.grown(ctx, own, size, rng, others, taken)
				lo = own.Lo
			}
			switch {
			case grew:
				// Grown in place: the lease of the whole new block is
				// written (and checked) below; the old one goes once
				// the registry has the new block.
			case keep && overlapping(taken, own.Lo, own.Hi) == nil:
				// Its lease is missing (a block from before leases, or
				// one a crash lost): lease it again unless another home
				// took any of its ports meanwhile — then the world moves.
				lo, hi = own.Lo, own.Hi
			default:
				if lo, hi, err = a.searchFrom(ctx, others, taken, size, rng, from, skipped); err != nil {
					return 0, 0, err
				}
			}
			path, err := a.lease(sub, project, worktree, lo, hi)
			if err != nil {
				return 0, 0, err
			}
			if path != "" {
				wrote = path
				return lo, hi, nil
			}
			if try == maxRaces {
				return 0, 0, fmt.Errorf("other binky homes leased the ports this one chose at the same moment, %d times in a row (last %d-%d); try again", maxRaces, lo, hi)
			}
			// Both racers may have backed off: wait a random moment, so
			// that one goes first and the other sees its lease, then
			// look again — from a random place in the range, so that
			// this home stops choosing the very block another home
			// leasing one block after another chooses next.
			if err := backOff(ctx, try); err != nil {
				return 0, 0, err
			}
			if v, err = a.view(all); err != nil {
				return 0, 0, err
			}
			taken = v.foreign
			from = rng[0] + rand.IntN(max(rng[1]-rng[0]+2-size, 1))
		}
	}
	b, created, err := a.reg.ReservePortBlock(ctx, project, worktree, choose)
	if err != nil {
		if wrote != "" {
			_ = remove(wrote)
		}
		return nil, false, err
	}
	if prev != nil && (prev.Lo != b.Lo || prev.Hi != b.Hi) {
		// The world moved: its old block's lease goes.
		a.removeMine(sub, prev.Lo, prev.Hi, project, worktree)
	}
	return b, created, nil
}

// searchFrom is search starting at from: the first free block at or
// after it, else the first in the whole range.
func (a *Allocator) searchFrom(ctx context.Context, others, leased []*registry.PortBlock, size int, rng [2]int, from int, skipped *[]int) (int, int, error) {
	if from > rng[0] && from+size-1 <= rng[1] {
		if lo, hi, err := a.search(ctx, others, leased, size, [2]int{from, rng[1]}, skipped); err == nil {
			return lo, hi, nil
		}
	}
	return a.search(ctx, others, leased, size, rng, skipped)
}

// backOff waits a random moment, longer after each race lost (up to
// 2^try ms, at most 64 ms), or until ctx ends.
func backOff(ctx context.Context, try int) error {
	t := time.NewTimer(time.Duration(rand.Int64N(int64(time.Millisecond) << min(try, 6))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readOwn reads a lease file of this user's subdirectory; nil when it is
// not a lease this home wrote.
func (a *Allocator) readOwn(path string) *Lease {
	f, owner, err := openLeaseFile(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := readAllBounded(f)
	if err != nil || owner != a.me {
		return nil
	}
	le, err := parseLease(b, filepath.Base(path))
	if err != nil || !a.isMine(le) {
		return nil
	}
	return le
}

// removeMine deletes the lease of lo..hi if it is this home's lease for the
// worktree. Call with the lock.
func (a *Allocator) removeMine(sub string, lo, hi int, project, worktree string) {
	path := filepath.Join(sub, leaseName(lo, hi))
	if le := a.readOwn(path); le != nil && le.Project == project && le.Worktree == worktree {
		_ = remove(path)
	}
}

// dropLeases deletes every lease of this home for the worktree. Call with
// the lock.
func (a *Allocator) dropLeases(sub, project, worktree string) error {
	ents, err := os.ReadDir(sub)
	if err != nil {
		return fmt.Errorf("read port leases in %s: %w", sub, err)
	}
	for _, e := range ents {
		if _, _, ok := parseLeaseName(e.Name()); !ok {
			continue
		}
		path := filepath.Join(sub, e.Name())
		if le := a.readOwn(path); le != nil && le.Project == project && le.Worktree == worktree {
			if err := remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeOldLeases deletes this home's leases of the format before
// per-user subdirectories, at the top of the lease directory, where the
// sticky bit lets their owner delete them.
func (a *Allocator) removeOldLeases() {
	ents, err := os.ReadDir(a.leases.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if _, _, ok := parseLeaseName(e.Name()); !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(a.leases.dir, e.Name())
		f, owner, err := openLeaseFile(path)
		if err != nil {
			continue
		}
		b, err := readAllBounded(f)
		f.Close()
		if err != nil || owner != a.me {
			continue
		}
		if le, err := parseLease(b, e.Name()); err == nil && le.HomeID == a.homeID && le.HomeDir == a.homeDir {
			_ = remove(path)
		}
	}
}

// LeaseSync is what SyncLeases did.
type LeaseSync struct {
	// Removed are this home's leases the registry no longer has, and
	// this user's leases of gone homes.
	Removed []Lease
	// Leased are registry blocks that had no lease and now have one.
	Leased []*registry.PortBlock
	// Contested are registry blocks without a lease that another home
	// leases (some of) meanwhile: their worlds move to a new block at
	// their next up.
	Contested []*registry.PortBlock
	// Ignored are the lease files found and not counted (at most 100 of
	// IgnoredTotal).
	Ignored      []IgnoredLease
	IgnoredTotal int
}

// SyncLeases brings the lease store in line with this home's registry, for
// the daemon at start: it deletes this home's leases the registry no longer
// has (a worktree removed while no lease lock was held, a daemon killed
// mid-reservation) and this user's leases of gone homes, removes temporary
// files a killed writer left and this home's leases of the old format, and
// leases every registry block that has no lease yet (blocks reserved
// before leases existed, or by a binky of the old format) unless another
// home leases some of its ports. Until it succeeds once, every
// reservation runs it first. Without Options.Leases it does nothing.
func (a *Allocator) SyncLeases(ctx context.Context) (LeaseSync, error) {
	if a.leases == nil {
		return LeaseSync{}, nil
	}
	sub, unlock, err := a.leases.lock(ctx)
	if err != nil {
		return LeaseSync{}, fmt.Errorf("sync port leases: %w", err)
	}
	defer unlock()
	return a.syncLocked(ctx, sub)
}

// LeasesSynced reports whether SyncLeases (or a reservation running it)
// got through since the allocator was made.
func (a *Allocator) LeasesSynced() bool { return a.leases == nil || a.synced.Load() }

// syncLocked is SyncLeases with the lock held.
func (a *Allocator) syncLocked(ctx context.Context, sub string) (LeaseSync, error) {
	var out LeaseSync
	if err := a.checkHome(); err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	blocks, err := a.reg.PortBlocks(ctx)
	if err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	removeTemps(sub)
	a.removeOldLeases()
	v, err := a.view(blocks)
	if err != nil {
		return out, fmt.Errorf("sync port leases: %w", err)
	}
	out.Removed, out.Ignored, out.IgnoredTotal = v.removed, v.ignored, len(v.ignored)+v.omitted
	for _, b := range blocks {
		if v.mine[worldKey(b.Project, b.Worktree)] != nil {
			continue
		}
		if overlapping(v.foreign, b.Lo, b.Hi) != nil {
			out.Contested = append(out.Contested, b)
			continue
		}
		path, err := a.lease(sub, b.Project, b.Worktree, b.Lo, b.Hi)
		if err != nil {
			return out, fmt.Errorf("sync port leases: %w", err)
		}
		if path == "" {
			out.Contested = append(out.Contested, b)
			continue
		}
		out.Leased = append(out.Leased, b)
	}
	a.synced.Store(true)
	return out, nil
}
