package ports

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/binkyhq/binky/host/registry"
)

// A world that needs more ports than its block has (a service added to
// binky.toml) keeps its block's first port when it can: the block grows
// in place over the ports right after it, so the ports its running
// services hold stay theirs and only the new services get new ports.
// It grows when every added port lies in the range, in no other
// worktree's block of this home, in no block another home leases, and
// binds. Otherwise the world moves to a new block, as before.

// grown returns the last port of own grown in place to size ports, and
// whether it can grow: own.Lo..own.Lo+size-1 lies in rng and overlaps no
// block of any of taken, and every port added after own.Hi binds (own's
// own ports are not probed: the world's services may hold them). Call it
// with own smaller than size, inside the reservation's transaction (and
// lease lock) for a reservation.
func (a *Allocator) grown(ctx context.Context, own *registry.PortBlock, size int, rng [2]int, taken ...[]*registry.PortBlock) (int, bool) {
	lo, hi := own.Lo, own.Lo+size-1
	if own.Size() >= size || lo < rng[0] || hi > rng[1] {
		return 0, false
	}
	for _, bs := range taken {
		if overlapping(bs, lo, hi) != nil {
			return 0, false
		}
	}
	for p := own.Hi + 1; p <= hi; p++ {
		if ctx.Err() != nil || a.probe(p) != nil {
			return 0, false
		}
	}
	return hi, true
}

// Growable reports whether a Reserve of size ports in rng (the
// allocator's range when rng is zero) would now keep the first port of
// the worktree's block: the block is large enough and is kept, or it
// grows in place over the free ports right after it. It is false when
// the block would move (its neighbour ports are taken, in another
// worktree's block, leased by another home, or held by a program; or the
// block leaves rng) and when the worktree has no block. Size 0 keeps any
// block (Reserve leaves it alone). Its errors are those Reserve would
// give for size and rng, and failures to read the registry or the lease
// store.
//
// It changes nothing: it reads the registry and the lease store (without
// their locks) and probes only the ports a growth would add. So it is a
// snapshot for a plan (`up --dry-run`): a Reserve after it may still
// move the block when another world takes those ports meanwhile, and the
// Reserve's answer is the one that counts.
func (a *Allocator) Growable(ctx context.Context, project, worktree string, size int, rng [2]int) (bool, error) {
	if size < 0 {
		return false, fmt.Errorf("check port growth of %s/%s: size %d is negative", project, worktree, size)
	}
	if size > MaxBlock {
		return false, fmt.Errorf("check port growth of %s/%s: the world asks for %d ports, more than the %d one world's block may have; give fewer of its services ports in binky.toml", project, worktree, size, MaxBlock)
	}
	if rng == [2]int{} {
		rng = a.rng
	}
	if err := validRange(rng); err != nil {
		return false, fmt.Errorf("check port growth of %s/%s: %w; fix [project] port_range in binky.toml", project, worktree, err)
	}
	all, err := a.reg.PortBlocks(ctx)
	if err != nil {
		return false, fmt.Errorf("check port growth of %s/%s: %w", project, worktree, err)
	}
	var own *registry.PortBlock
	others := make([]*registry.PortBlock, 0, len(all))
	for _, b := range all {
		if b.Project == project && b.Worktree == worktree {
			own = b
		} else {
			others = append(others, b)
		}
	}
	if own == nil {
		return false, nil
	}
	if size == 0 {
		return true, nil
	}
	fits := own.Size() >= size && own.Lo >= rng[0] && own.Hi <= rng[1]
	if a.leases == nil {
		if fits {
			return true, nil
		}
		_, ok := a.grown(ctx, own, size, rng, others)
		return ok, nil
	}
	foreign, leased, err := a.peekLeases(own)
	if err != nil {
		return false, fmt.Errorf("check port growth of %s/%s: %w", project, worktree, err)
	}
	if fits {
		// Kept when leased by this home, or leased again when no
		// other home took any of its ports.
		return leased || overlapping(foreign, own.Lo, own.Hi) == nil, nil
	}
	_, ok := a.grown(ctx, own, size, rng, others, foreign)
	return ok, nil
}

// peekLeases reads the lease store without its lock and without removing
// anything: the blocks other homes lease (as a reservation's view counts
// them), and whether this home leases own as it is.
func (a *Allocator) peekLeases(own *registry.PortBlock) (foreign []*registry.PortBlock, leased bool, err error) {
	s, err := a.leases.scan("")
	if errors.Is(err, fs.ErrNotExist) { // no home leased anything yet
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, e := range s.valid {
		le := e.lease
		if !a.isMine(le) {
			foreign = append(foreign, leaseBlock(le))
			continue
		}
		if le.Project == own.Project && le.Worktree == own.Worktree && le.Lo == own.Lo && le.Hi == own.Hi {
			leased = true
		}
	}
	return foreign, leased, nil
}
