package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/sdk/names"
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
// When either fails, logs reads binky.db read-only instead (registryView):
// no transaction, no file created, and the same secrets redacted.

// registryView is what logs needs of binky.db, read without writing: every
// world with its secrets and its services' addresses and values.
type registryView struct {
	worlds []viewWorld
}

type viewWorld struct {
	id                                int64
	project, name, branch, path, repo string
	secrets                           []string
	services                          []viewService
}

type viewService struct {
	name    string
	address string
	values  map[string]string
}

// readRegistry reads home's binky.db read-only. With a write-ahead log on
// disk (a daemon has the file open, or left it unmerged) it opens the file
// read-only through SQLite's shared memory, which exists then, so it sees
// what the log holds; with none, the main file is everything and it is
// read as immutable, which creates no -wal or -shm file at all.
func readRegistry(ctx context.Context, home string) (*registryView, error) {
	path := filepath.Join(home, registry.FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("read the registry %s: %w", path, err)
	}
	uri, flags := path, sqlite.OpenReadOnly
	if st, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		uri, flags = immutableURI(path), sqlite.OpenReadOnly|sqlite.OpenURI
	}
	conn, err := sqlite.OpenConn(uri, flags)
	if err != nil {
		return nil, fmt.Errorf("read the registry %s read-only: %w", path, err)
	}
	defer conn.Close()
	conn.SetInterrupt(ctx.Done())
	v, err := readView(conn)
	if err != nil {
		return nil, fmt.Errorf("read the registry %s read-only: %w", path, err)
	}
	return v, nil
}

func readView(conn *sqlite.Conn) (*registryView, error) {
	var appID, version int32
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA application_id;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error { appID = stmt.ColumnInt32(0); return nil },
	}); err != nil {
		return nil, err
	}
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA user_version;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error { version = stmt.ColumnInt32(0); return nil },
	}); err != nil {
		return nil, err
	}
	// A newer schema may keep secrets this binary does not know of: it is
	// not read (registry.Open refuses it too).
	if appID != registry.AppID || version < 1 || version > registry.SchemaVersion {
		return nil, fmt.Errorf("not a registry this binky reads (application_id %#x, schema version %d; this binky's is %d)", appID, version, registry.SchemaVersion)
	}
	v := &registryView{}
	byID := map[int64]int{}
	err := sqlitex.ExecuteTransient(conn, "SELECT id, project, name, branch, path, repo, secrets FROM worktrees ORDER BY project, name;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			w := viewWorld{id: stmt.ColumnInt64(0), project: stmt.ColumnText(1), name: stmt.ColumnText(2),
				branch: stmt.ColumnText(3), path: stmt.ColumnText(4), repo: stmt.ColumnText(5)}
			if err := json.Unmarshal([]byte(stmt.ColumnText(6)), &w.secrets); err != nil {
				return fmt.Errorf("decode the secrets of world %s/%s: %w", w.project, w.name, err)
			}
			byID[w.id] = len(v.worlds)
			v.worlds = append(v.worlds, w)
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	err = sqlitex.ExecuteTransient(conn, "SELECT worktree_id, name, address, vals FROM services ORDER BY worktree_id, name;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			s := viewService{name: stmt.ColumnText(1), address: stmt.ColumnText(2)}
			if err := json.Unmarshal([]byte(stmt.ColumnText(3)), &s.values); err != nil {
				return fmt.Errorf("decode the values of service %s: %w", s.name, err)
			}
			if i, ok := byID[stmt.ColumnInt64(0)]; ok {
				v.worlds[i].services = append(v.worlds[i].services, s)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// redactor knows what logview.Redactor knows: every world's secrets and
// the passwords in every service's address and values.
func (v *registryView) redactor() *redact.Redactor {
	red := redact.New()
	for _, w := range v.worlds {
		for _, s := range w.secrets {
			red.Add(s)
		}
		for _, s := range w.services {
			red.AddAddress(s.address)
			for _, val := range s.values {
				red.AddAddress(val)
			}
		}
	}
	return red
}

// find is the daemon's world resolution (host/daemon findWorld) for when
// no daemon answers: a name or branch (or its folded worktree name), in
// project when given, else in the project of the world the caller stands
// in when names of several projects match; no name is the world whose
// worktree holds dir.
func (v *registryView) find(name, project, dir string) (api.World, error) {
	if name == "" {
		best := -1
		for i, w := range v.worlds {
			if (project == "" || w.project == project) && within(dir, w.path) && (best < 0 || len(w.path) > len(v.worlds[best].path)) {
				best = i
			}
		}
		if best < 0 {
			return api.World{}, fmt.Errorf("which worktree? no world's worktree holds %s, so give the worktree's name or branch", dir)
		}
		return v.worlds[best].world(), nil
	}
	match := func(n string) []viewWorld {
		var out []viewWorld
		for _, w := range v.worlds {
			if (w.name == n || w.branch == n) && (project == "" || w.project == project) {
				out = append(out, w)
			}
		}
		return out
	}
	found := match(name)
	if folded := names.Worktree(name); len(found) == 0 && folded != name {
		found = match(folded)
	}
	if len(found) > 1 && project == "" {
		for _, w := range v.worlds {
			if dir != "" && (within(dir, w.repo) || within(dir, w.path)) {
				var in []viewWorld
				for _, f := range found {
					if f.project == w.project {
						in = append(in, f)
					}
				}
				if len(in) > 0 {
					found = in
				}
				break
			}
		}
	}
	switch len(found) {
	case 0:
		where := ""
		if project != "" {
			where = fmt.Sprintf(" in project %q", project)
		}
		return api.World{}, fmt.Errorf("no world named %q%s (binky status lists them)", name, where)
	case 1:
		return found[0].world(), nil
	}
	projects := map[string]bool{}
	var cands []string
	for _, w := range found {
		projects[w.project] = true
		cands = append(cands, w.project+"/"+w.name)
	}
	if len(projects) > 1 {
		sort.Strings(cands)
		return api.World{}, fmt.Errorf("%q names worlds in several projects (%s): pass --project", name, strings.Join(cands, ", "))
	}
	// One project: a branch and another world's name can match alike; the
	// exact worktree name wins.
	for _, w := range found {
		if w.name == name {
			return w.world(), nil
		}
	}
	return found[0].world(), nil
}

func (w viewWorld) world() api.World {
	out := api.World{Project: w.project, Worktree: w.name, Branch: w.branch, Path: w.path}
	for _, s := range w.services {
		out.Services = append(out.Services, api.Service{Name: s.name})
	}
	return out
}

// within reports whether dir is root or lies under it.
func within(dir, root string) bool {
	if dir == "" || root == "" {
		return false
	}
	for _, p := range [][2]string{{dir, root}, {evalPath(dir), evalPath(root)}} {
		rel, err := filepath.Rel(p[1], p[0])
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func evalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// immutableURI is a read-only, immutable SQLite URI for path (as
// host/registry makes one to inspect a file it may refuse).
func immutableURI(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x on Windows
	}
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	return "file://" + p + "?mode=ro&immutable=1"
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
