package sqliteadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/binkyhq/binky/sdk"
)

// Clone methods reported in CloneResponse.Method.
const (
	MethodReflink = "reflink" // the filesystem shares the source's blocks
	MethodCopy    = "copy"    // the bytes were copied
)

// Clone makes the slice a copy of the source slice, replacing the slice if
// it exists. It refuses to read a source, or to replace a slice, that
// another binky home claimed; the copy is claimed for the home that asked
// for it (the source's claim file is not copied), before it is moved into
// place.
//
// The copy is consistent even while another process writes the source:
// the source's write lock is held (BEGIN IMMEDIATE) while its file and its
// WAL are copied. Holding it, no transaction can commit and the WAL cannot
// be restarted, so the copied WAL holds every committed frame. A checkpoint
// already running in another process may still be writing pages into the
// main file, but only pages whose newer version sits in that WAL, which
// the copy replays when it is opened. The copy is then checkpointed on its
// own and moved into place.
func (*SQLite) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	loc, dst, err := slicePath(&req.Target)
	if err != nil {
		return nil, err
	}
	src, err := loc.path(req.Source)
	if err != nil {
		return nil, err
	}
	if src == dst {
		return nil, sdk.Errorf(sdk.CodeInvalid, "clone sqlite slice %q onto itself", req.Slice)
	}
	if err := checkClaim(&req.Target, src); err != nil {
		return nil, claimErr("clone", req.Slice, err)
	}
	if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, sdk.Errorf(sdk.CodeInvalid, "clone sqlite slice %q from %q: the source %s does not exist; provision it first", req.Slice, req.Source, src)
		}
		return nil, sdk.Errorf(sdk.CodeConflict, "clone sqlite slice %q from %q: the source %s is not a regular file (%v)", req.Slice, req.Source, src, err)
	}
	if err := claimSlice(&req.Target, dst); err != nil {
		return nil, claimErr("clone", req.Slice, err)
	}
	method, err := cloneFile(ctx, src, dst)
	if err != nil {
		return nil, fmt.Errorf("clone sqlite slice %q from %q: %w", req.Slice, req.Source, err)
	}
	return &sdk.CloneResponse{Method: method}, nil
}

// cloneFile copies the database at src to dst through a temporary
// directory beside dst, so a failure never leaves a half copy at dst.
func cloneFile(ctx context.Context, src, dst string) (method string, err error) {
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".clone-"+filepath.Base(dst)+"-")
	if err != nil {
		return "", fmt.Errorf("make a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	copyPath := filepath.Join(tmp, filepath.Base(dst))
	method, err = snapshot(ctx, src, copyPath)
	if err != nil {
		return "", err
	}
	if err := settle(ctx, copyPath); err != nil {
		return "", err
	}
	if err := removeDB(ctx, dst); err != nil {
		return "", fmt.Errorf("remove the old slice: %w", err)
	}
	if err := os.Rename(copyPath, dst); err != nil {
		return "", fmt.Errorf("move the copy into place: %w", err)
	}
	return method, nil
}

// snapshot copies src and its WAL to dst and dst-wal while holding src's
// write lock. The method is that of the main file.
func snapshot(ctx context.Context, src, dst string) (method string, err error) {
	db, err := openDB(src)
	if err != nil {
		return "", dbError("open the source", src, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", dbError("open the source", src, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return "", dbError("lock the source", src, err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
			err = dbError("unlock the source", src, rerr)
		}
	}()
	method, err = copyFile(dst, src)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(src + "-wal"); err == nil && fi.Size() > 0 {
		if _, err := copyFile(dst+"-wal", src+"-wal"); err != nil {
			return "", err
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("inspect the source's WAL: %w", err)
	}
	return method, nil
}

// settle opens the fresh copy alone, which replays its WAL, and folds the
// WAL into the main file, so that the main file alone is the database.
func settle(ctx context.Context, path string) error {
	db, err := openDB(path)
	if err != nil {
		return dbError("open the copy", path, err)
	}
	defer db.Close()
	var busy, logFrames, checkpointed int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed); err != nil {
		return dbError("checkpoint the copy", path, err)
	}
	if busy != 0 {
		return sdk.Errorf(sdk.CodeInternal, "checkpoint the copy %s: it was busy, yet no other process knows it", path)
	}
	return dbError("close the copy", path, db.Close())
}
