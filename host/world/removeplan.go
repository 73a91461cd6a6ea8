package world

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/sdk"
)

// removePlan is what a remove needs to finish once the worktree is gone:
// each slice's adapter and its target with admin_url and config already
// rendered. A remove records it before it deletes anything, and a retry
// reads it instead of the worktree's binky.toml and env files, which may
// have gone with the worktree. It holds credentials (the rendered
// admin_url), so it is written 0600 under the home.
type removePlan struct {
	Slices []recordedSlice `json:"slices"`
	// Secrets are the resolved ${env.*} values that are secrets: a retry
	// in a restarted daemon still redacts them.
	Secrets []string `json:"secrets,omitempty"`
}

type recordedSlice struct {
	Service string        `json:"service"`
	Adapter string        `json:"adapter"`
	Timeout time.Duration `json:"timeout,omitempty"`
	Target  sdk.Target    `json:"target"`
	// Unresolved says why the target could not be rendered (a remove
	// --force that found neither the config nor its env files): the slice
	// can only be reported as left.
	Unresolved string `json:"unresolved,omitempty"`
}

func (e *Engine) removePlanPath(rec *registry.Worktree) string {
	return filepath.Join(e.home, "removing", filepath.Base(rec.Project), filepath.Base(rec.Name)+".json")
}

// loadRemovePlan reads the plan an earlier remove of rec recorded; nil
// when there is none.
func (e *Engine) loadRemovePlan(rec *registry.Worktree) (*removePlan, error) {
	b, err := os.ReadFile(e.removePlanPath(rec))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read what the first remove of %s recorded: %w", rec.Name, err)
	}
	var p removePlan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("read what the first remove of %s recorded (%s): %w", rec.Name, e.removePlanPath(rec), err)
	}
	return &p, nil
}

// saveRemovePlan records plan for rec, atomically: a reader sees the old
// plan or the new one.
func (e *Engine) saveRemovePlan(rec *registry.Worktree, plan *removePlan) error {
	path := e.removePlanPath(rec)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (e *Engine) dropRemovePlan(rec *registry.Worktree) {
	os.Remove(e.removePlanPath(rec))
}
