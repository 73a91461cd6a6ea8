package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// describeRun is one describe of one build of a binary, from the cache or in
// flight. Every caller that needs the same build shares it; a run that no
// caller waits for any more is cancelled and its outcome not cached.
type describeRun struct {
	key    cacheKey
	done   chan struct{}
	cancel context.CancelFunc // nil for a cached outcome
	// waiters counts the callers still interested; guarded by Host.mu.
	waiters int
	// Set before done is closed.
	d   *sdk.DescribeResponse
	err error
}

// describeSet is one caller's share of the runs for its candidates.
type describeSet struct {
	h     *Host
	cands []candidate
	runs  []*describeRun
	held  []bool // the caller still counts as a waiter of runs[i]
}

// startDescribes returns one run per candidate: the cached describe (or
// cached failure) of its current build, the describe already in flight, or
// a new describe started now. New describes run in parallel, each under the
// describe timeout. With retryFailed a cached failure is not trusted and the
// binary is described again. The caller must wait for every run or release
// the set.
func (h *Host) startDescribes(ctx context.Context, cands []candidate, retryFailed bool) *describeSet {
	disk := h.readCache()
	s := &describeSet{h: h, cands: cands, runs: make([]*describeRun, len(cands)), held: make([]bool, len(cands))}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range cands {
		key, err := statKey(c.path)
		if err != nil {
			s.runs[i] = finishedRun(nil, fmt.Errorf("describe: %w", err))
			continue
		}
		d, failure, ok := h.known.lookup(key)
		if !ok {
			d, failure, ok = disk.lookup(key)
		}
		if ok && !(retryFailed && failure != "") {
			var err error
			if failure != "" {
				err = errors.New(failure)
			}
			s.runs[i] = finishedRun(d, err)
			continue
		}
		r := h.inflight[c.path]
		if r == nil || r.key != key {
			// A describe outlives no caller: it ends when the last one
			// stops waiting, or at the describe timeout.
			rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			r = &describeRun{key: key, done: make(chan struct{}), cancel: cancel}
			h.inflight[c.path] = r
			go h.runDescribe(rctx, r, c)
		}
		r.waiters++
		s.runs[i], s.held[i] = r, true
	}
	return s
}

func finishedRun(d *sdk.DescribeResponse, err error) *describeRun {
	r := &describeRun{done: make(chan struct{}), d: d, err: err}
	close(r.done)
	return r
}

// runDescribe describes one binary, records the outcome in memory and in the
// cache file, and releases the run's waiters. A describe cut short because
// nobody waits for it any more is not recorded.
func (h *Host) runDescribe(ctx context.Context, r *describeRun, c candidate) {
	defer r.cancel()
	d, err := h.describe(ctx, c.name, c.path)
	h.mu.Lock()
	cancelled := ctx.Err() != nil
	switch {
	case cancelled:
	case err != nil:
		h.known.storeFailure(r.key, err.Error())
	default:
		h.known.store(r.key, d)
	}
	if h.inflight[c.path] == r {
		delete(h.inflight, c.path)
	}
	h.mu.Unlock()
	if !cancelled {
		h.persist()
	}
	r.d, r.err = d, err
	close(r.done)
}

// wait returns the outcome of run i as an Info, or ctx's error.
func (s *describeSet) wait(ctx context.Context, i int) (Info, error) {
	r, c := s.runs[i], s.cands[i]
	select {
	case <-r.done:
	default:
		select {
		case <-r.done:
		case <-ctx.Done():
			return Info{}, fmt.Errorf("discover adapters: %w", ctx.Err())
		}
	}
	s.drop(i)
	info := Info{Name: c.name, Path: c.path, Origin: c.origin, Tiers: []string{}}
	if r.err != nil {
		info.Error = r.err.Error()
	}
	if r.d != nil {
		fill(&info, r.d)
	}
	return info, nil
}

// release gives up the caller's interest in the runs it has not waited for.
func (s *describeSet) release() {
	for i := range s.runs {
		s.drop(i)
	}
}

// drop stops counting the caller as a waiter of run i, and cancels a run
// that nobody waits for.
func (s *describeSet) drop(i int) {
	if !s.held[i] {
		return
	}
	s.held[i] = false
	r := s.runs[i]
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	r.waiters--
	if r.waiters == 0 && r.cancel != nil {
		r.cancel()
		if s.h.inflight[r.key.Path] == r {
			delete(s.h.inflight, r.key.Path)
		}
	}
}

// readCache reads the cache file under the file lock.
func (h *Host) readCache() *describeCache {
	h.cacheMu.Lock()
	defer h.cacheMu.Unlock()
	return h.loadCache()
}

// persist merges what this process has learned into the cache file, drops
// the entries of binaries that are gone or changed, and writes the file when
// that changed it.
func (h *Host) persist() {
	if h.home == "" {
		return
	}
	h.cacheMu.Lock()
	defer h.cacheMu.Unlock()
	disk := h.loadCache()
	next := newCache()
	next.merge(disk)
	h.mu.Lock()
	next.merge(h.known)
	h.mu.Unlock()
	next.prune()
	if next.equal(disk) {
		return
	}
	if err := h.saveCache(next); err != nil {
		h.log.Warn("could not write the adapter cache; adapters will be described again next time", "error", err)
	}
}

// describe runs a one-shot describe and checks the answer is usable.
func (h *Host) describe(ctx context.Context, name, path string) (*sdk.DescribeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, h.describeTimeout)
	defer cancel()
	b := h.binary(ctx, path, name, func() string { return sdk.CallDescribe })
	d, err := client.Describe(ctx, b, &sdk.DescribeRequest{Header: sdk.Header{Protocol: sdk.Protocol, Adapter: name}})
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	switch {
	case d.Protocol < 1:
		return nil, fmt.Errorf("describe reply has no protocol version (want 1..%d)", sdk.Protocol)
	case d.Protocol > sdk.Protocol:
		return nil, fmt.Errorf("adapter speaks protocol %d; this binky knows protocol %d: upgrade binky", d.Protocol, sdk.Protocol)
	case d.Name == "":
		return nil, errors.New("describe reply has no name")
	}
	return d, nil
}
