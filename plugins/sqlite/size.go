package sqliteadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/extents"
)

// Size is the slice's database file and its -wal, -shm and -journal
// companions on disk. Where the filesystem maps extents (Linux FIEMAP),
// the blocks it shares with another file — a reflink clone's, until
// written — are reported as Shared, so the host counts them once, with
// the file they came from. A slice that does not exist is 0 bytes.
func (*SQLite) Size(_ context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	_, path, err := slicePath(&req.Target)
	if err != nil {
		return nil, err
	}
	resp := &sdk.SizeResponse{}
	told := true
	for _, f := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("size of sqlite slice %q: %w", req.Slice, err)
		}
		resp.Bytes += fi.Size()
		if _, shared, err := extents.File(f); err == nil {
			resp.Shared += min(shared, fi.Size())
		} else {
			told = false
		}
	}
	switch {
	case resp.Shared > 0:
		resp.Note = "blocks shared with a reflink clone's source are counted once, with the source"
	case !told && resp.Bytes > 0:
		resp.Note = "file sizes; this filesystem does not tell reflink-shared blocks apart"
	}
	return resp, nil
}

var _ sdk.Sizer = (*SQLite)(nil)
