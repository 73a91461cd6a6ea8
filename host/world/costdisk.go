package world

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// diskWalkBound bounds one measure of a worktree's files: a tree bigger
// than it can walk in this time is reported as partial.
const diskWalkBound = 30 * time.Second

// measureDisk sums the sizes of the files in the worktree at dir that git
// does not track: the untracked ones (git ls-files --others
// --exclude-standard) and the ignored ones (every other untracked file the
// walk finds). .git is skipped. Sizes are the files' own (hard links and
// sparse files count in full).
func measureDisk(ctx context.Context, dir string) api.DiskCost {
	out := api.DiskCost{}
	ctx, cancel := context.WithTimeout(ctx, diskWalkBound)
	defer cancel()
	tracked, err := gitFiles(ctx, dir, "ls-files", "-z", "--cached")
	if err != nil {
		out.Error = err.Error()
		return out
	}
	untracked, err := gitFiles(ctx, dir, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		out.Error = err.Error()
		return out
	}
	seen := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: not counted
		}
		if seen++; seen%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Name() == ".git" && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if _, ok := tracked[rel]; ok {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		out.Files++
		if _, ok := untracked[rel]; ok {
			out.Untracked += fi.Size()
		} else {
			out.Ignored += fi.Size()
		}
		return nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		out.Partial = true
	} else if err != nil {
		out.Error = err.Error()
	}
	return out
}

// gitFiles runs git with args in dir and returns the NUL-separated paths
// it prints.
func gitFiles(ctx context.Context, dir string, args ...string) (map[string]struct{}, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.quotePath=off"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	set := map[string]struct{}{}
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			set[string(f)] = struct{}{}
		}
	}
	return set, nil
}
