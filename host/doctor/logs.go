package doctor

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxLogDir is the size of $BINKY_HOME/logs past which doctor warns: a
// service that runs long without restarting grows its log until then.
const MaxLogDir = 512 << 20

func checkLogs(ctx context.Context, e *Env) []Finding {
	dir := filepath.Join(e.Home, "logs")
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return []Finding{skip("%s could not be measured: %v", dir, err)}
	}
	mb := total >> 20
	if total > MaxLogDir {
		return []Finding{warn("binky down <worktree> && binky up <worktree>  (a restart rolls its logs; binky remove deletes a world's logs)",
			"%s holds %d MiB of logs, past %d MiB", dir, mb, MaxLogDir>>20)}
	}
	return []Finding{ok("%s holds %d MiB of logs", dir, mb)}
}
