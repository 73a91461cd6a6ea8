package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/registry"
)

// openRO opens binky.db read-only: doctor must never migrate, checkpoint or
// otherwise write it. fs.ErrNotExist when there is none yet.
func openRO(path string) (*sqlite.Conn, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	return sqlite.OpenConn("file://"+p+"?mode=ro", sqlite.OpenReadOnly|sqlite.OpenURI)
}

// checkRegistry runs PRAGMA quick_check and compares the schema version
// with this binary's.
func checkRegistry(ctx context.Context, e *Env) []Finding {
	path := registryPath(e)
	conn, err := openRO(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []Finding{ok("no registry yet at %s (binky up makes it)", path)}
	}
	if err != nil {
		return []Finding{fail("mv "+path+" "+path+".broken  (binky makes a new one; worlds are then forgotten)", "cannot open the registry %s read-only: %v", path, err)}
	}
	defer conn.Close()
	conn.SetInterrupt(ctx.Done())
	var out []Finding
	var problems []string
	err = sqlitex.ExecuteTransient(conn, "PRAGMA quick_check;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			if s := stmt.ColumnText(0); s != "ok" {
				problems = append(problems, s)
			}
			return nil
		},
	})
	switch {
	case err != nil:
		return append(out, fail("binky daemon stop && mv "+path+" "+path+".broken  (binky makes a new one; worlds are then forgotten)", "quick_check of %s failed: %v", path, err))
	case len(problems) > 0:
		if len(problems) > 3 {
			problems = append(problems[:3], "…")
		}
		out = append(out, fail("binky daemon stop && mv "+path+" "+path+".corrupt  (binky makes a new one)", "the registry %s is damaged: %s", path, strings.Join(problems, "; ")))
	default:
		out = append(out, ok("the registry passes quick_check"))
	}
	var version, appID int32
	err = sqlitex.ExecuteTransient(conn, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id);", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			version, appID = int32(stmt.ColumnInt64(0)), int32(stmt.ColumnInt64(1))
			return nil
		},
	})
	switch {
	case err != nil:
		out = append(out, fail("binky daemon stop && mv "+path+" "+path+".broken  (binky makes a new one)", "read the schema version of %s: %v", path, err))
	case appID != registry.AppID && appID != 0:
		out = append(out, fail("mv "+path+" "+path+".foreign", "%s is another program's database (application_id %#x)", path, appID))
	case version > registry.SchemaVersion:
		out = append(out, fail("install the newer binky that wrote it (or set BINKY_HOME to another directory)",
			"the registry's schema version is %d, newer than this binky's %d", version, registry.SchemaVersion))
	case version < registry.SchemaVersion:
		out = append(out, ok("the registry's schema version is %d; this binky (%d) migrates it at the next start", version, registry.SchemaVersion))
	default:
		out = append(out, ok("the registry's schema version is %d", version))
	}
	return out
}

// world is one registered worktree, as doctor needs it.
type world struct {
	Project, Name, Path, Repo string
	// Config is the binky.toml the world was last brought up with.
	Config string
}

// worlds lists the registered worktrees, read-only; nil when there is no
// registry.
func worlds(e *Env) ([]world, error) {
	conn, err := openRO(registryPath(e))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []world
	err = sqlitex.ExecuteTransient(conn, "SELECT project, name, path, repo, config_path FROM worktrees ORDER BY project, name;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			out = append(out, world{stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnText(2), stmt.ColumnText(3), stmt.ColumnText(4)})
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("list the worktrees of %s: %w", registryPath(e), err)
	}
	return out, nil
}

// portBlocks lists the registered port blocks.
func portBlocks(e *Env) ([][2]int, error) {
	conn, err := openRO(registryPath(e))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out [][2]int
	err = sqlitex.ExecuteTransient(conn, "SELECT lo, hi FROM port_blocks;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			out = append(out, [2]int{stmt.ColumnInt(0), stmt.ColumnInt(1)})
			return nil
		},
	})
	return out, err
}
