package sqliteadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Name is the adapter's name; binky finds it as binky-adapter-sqlite.
const Name = "sqlite"

// SQLite is the adapter. It keeps no state between calls.
type SQLite struct{}

// New returns the adapter.
func New() *SQLite { return &SQLite{} }

// Describe says who the adapter is: sqlite, able to clone, recording each
// slice's owner (see claim.go).
func (*SQLite) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"sqlite3"}, Clone: true, Claims: true}, nil
}

// Provision records the slice's owner claim (refusing a slice another binky
// home claimed, adopting one nobody claimed), then creates the slice's
// database file in WAL mode, or checks the one that exists.
func (*SQLite) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	loc, path, err := slicePath(&req.Target)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(loc.dir, 0o700); err != nil {
		return nil, fmt.Errorf("provision sqlite slice %q: create directory: %w", req.Slice, err)
	}
	if err := claimSlice(&req.Target, path); err != nil {
		return nil, claimErr("provision", req.Slice, err)
	}
	_, statErr := os.Stat(path)
	if err := provision(ctx, path); err != nil {
		return nil, err
	}
	return sdk.Provisioned(statErr == nil), nil
}

func provision(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return sdk.Errorf(sdk.CodeConflict, "provision %s: it exists and is not a regular file; move it away", path)
	}
	db, err := openDB(path)
	if err != nil {
		return dbError("provision", path, err)
	}
	defer db.Close()
	// On a new file this writes the first page, so the file is a valid
	// empty database that remembers WAL mode.
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return dbError("provision", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return sdk.Errorf(sdk.CodeConflict, "provision %s: the database stays in %s journal mode, not WAL; another process may hold it open", path, mode)
	}
	return dbError("provision: close", path, db.Close())
}

// Resolve answers sqlite://<absolute path> and the path itself in
// values["path"]. It does not check that the slice exists, only that no
// other binky home claimed it.
func (*SQLite) Resolve(_ context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	_, path, err := slicePath(&req.Target)
	if err != nil {
		return nil, err
	}
	if err := checkClaim(&req.Target, path); err != nil {
		return nil, claimErr("resolve", req.Slice, err)
	}
	// database is the path too: what Rails' database: and other
	// frameworks' settings take for SQLite.
	return &sdk.ResolveResponse{Address: address(path), Values: map[string]string{"path": path, sdk.ValueDatabase: path}}, nil
}

// address is the slice's URL: sqlite:// then the absolute path with forward
// slashes (sqlite:///home/me/x.db; sqlite:///C:/Users/me/x.db on Windows),
// as SQLite tools read it. Only the bytes that would end or break a URL's
// path ('%', '?', '#' and control characters) are percent-encoded, so any
// path parses back from the URL and an ordinary one reads as it is.
func address(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	var b strings.Builder
	b.WriteString("sqlite://")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Destroy removes the slice's database file and its -wal, -shm and
// -journal companions, then its owner claim. A slice another binky home
// claimed is refused before anything is removed; a slice already gone is
// fine.
func (*SQLite) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	_, path, err := slicePath(&req.Target)
	if err != nil {
		return nil, err
	}
	if err := checkClaim(&req.Target, path); err != nil {
		return nil, claimErr("destroy", req.Slice, err)
	}
	if err := removeDB(ctx, path); err != nil {
		return nil, fmt.Errorf("destroy sqlite slice %q: %w", req.Slice, err)
	}
	// The claim goes last, so a destroy that fails half-way leaves what is
	// left of the slice still claimed.
	if err := dropClaim(path); err != nil {
		return nil, fmt.Errorf("destroy sqlite slice %q: %w", req.Slice, err)
	}
	return &sdk.DestroyResponse{}, nil
}

// removeDB removes a database file and its companions, the main file last,
// so that a half-done removal never leaves a stale WAL for a new database
// of the same name to replay.
//
// On Windows a file another process opened without FILE_SHARE_DELETE (as
// SQLite opens every database) cannot be removed. removeDB first takes a
// handle for deletion on every file that exists, waiting up to
// inUseWait for a holder to close it, and removes nothing until it has them
// all: a slice in use is left whole, refused with code conflict naming the
// file and, where Windows tells, the process that holds it; its claim
// stays, so the next destroy finishes. Held handles also keep any new
// opener out until the files are gone. Unix removes at once.
func removeDB(ctx context.Context, path string) error {
	files := []string{path + "-wal", path + "-shm", path + "-journal", path}
	release, err := holdForRemoval(ctx, files)
	if err != nil {
		return err
	}
	defer release()
	var errs []error
	for _, p := range files {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var _ sdk.Adapter = (*SQLite)(nil)
