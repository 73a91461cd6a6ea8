package world

import (
	"context"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
)

// findWorld is Find over the engine's registry: every verb resolves a
// world's name by the same rules.
func (e *Engine) findWorld(ctx context.Context, ref api.WorldRef) (*registry.Worktree, error) {
	return Find(ctx, e.reg, ref)
}

// WorldLock is the lock that serializes operations on one world.
func (e *Engine) WorldLock(project, worktree string) *Lock {
	return e.worlds.Get(Key(project, worktree))
}

// repoLock serializes git worktree changes in one repository.
func (e *Engine) repoLock(root string) *Lock { return e.repos.Get(root) }

// lockWorld finds a world and takes its lock for op, then reads it again:
// an op that waited for the lock sees what the previous op left (or that
// it removed the world). While another op holds it, s is told which; a
// caller that hangs up meanwhile leaves without it.
func (e *Engine) lockWorld(ctx context.Context, s Progress, op string, ref api.WorldRef) (*registry.Worktree, func(), error) {
	rec, err := e.findWorld(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	m := e.WorldLock(rec.Project, rec.Name)
	wctx, cancel := UntilGone(ctx, s)
	err = m.Lock(wctx, s, op, rec.Name)
	cancel()
	if err != nil {
		return nil, nil, api.Errorf(api.CodeConflict, "%v", err)
	}
	fresh, err := e.reg.WorktreeByID(ctx, rec.ID)
	if err != nil {
		m.Unlock()
		if registry.IsNotFound(err) {
			return nil, nil, api.Errorf(api.CodeNotFound, "world %s was removed meanwhile", rec.Name)
		}
		return nil, nil, err
	}
	return fresh, m.Unlock, nil
}
