package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"zombiezen.com/go/sqlite"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
)

// `binky logs` reads; it must work when nothing can be written (a full
// disk, a read-only file system), which is when one most wants to read
// what a service logged. Two of its steps may fail then:
//
//   - the redactor comes from registry.Open (logview.Redactor), which
//     writes nothing to a registry at the current schema and opens it
//     read-only on a full disk, but must migrate an older one, and cannot
//     open one the caller may not write (another user's home);
//   - with no daemon running, finding the world starts one, which starts
//     degraded on a full disk but not on a home it cannot write at all.
//
// When either fails, logs opens binky.db with registry.OpenReadOnly
// instead (nothing written, no file created), finds the world by the
// engine's own rules (world.Find, as every verb does) and redacts the same
// secrets (logview.RedactorOf).

// openReadOnly opens home's registry without writing to it.
func openReadOnly(ctx context.Context, home string) (*registry.Registry, error) {
	return registry.OpenReadOnly(ctx, filepath.Join(home, registry.FileName))
}

// readWorld is what logs needs of rec and reg: the world's names, path
// and services, and the redactor of every secret reg records.
func readWorld(ctx context.Context, reg *registry.Registry, rec *registry.Worktree) (api.World, *redact.Redactor, error) {
	svcs, err := reg.Services(ctx, rec.ID)
	if err != nil {
		return api.World{}, nil, fmt.Errorf("read the services of %s/%s: %w", rec.Project, rec.Name, err)
	}
	w := api.World{Project: rec.Project, Worktree: rec.Name, Branch: rec.Branch, Path: rec.Path, Repo: rec.Repo}
	for _, s := range svcs {
		w.Services = append(w.Services, api.Service{Name: s.Name})
	}
	red, err := logview.RedactorOf(ctx, reg)
	if err != nil {
		return api.World{}, nil, err
	}
	return w, red, nil
}

// readOnlyRedactor is logview.Redactor over home's registry opened
// read-only.
func readOnlyRedactor(ctx context.Context, home string) (*redact.Redactor, error) {
	reg, err := openReadOnly(ctx, home)
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	return logview.RedactorOf(ctx, reg)
}

// cannotWrite reports whether err is a failed write: a full disk or quota,
// a read-only file system or registry, or SQLite failing to write its
// files. Those are the failures reading binky.db read-only gets past; a
// refused registry (newer, foreign) is not one of them.
func cannotWrite(err error) bool {
	if err == nil || errors.Is(err, registry.ErrNewerSchema) || errors.Is(err, registry.ErrNotRegistry) {
		return false
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultFull, sqlite.ResultReadOnly, sqlite.ResultIOErr, sqlite.ResultCantOpen:
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "disk is full") || strings.Contains(msg, "disk I/O error") || strings.Contains(msg, "readonly database")
}
