package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pgTools locates the PostgreSQL programs and says how to run the server
// ones: initdb and postgres refuse to run as root, so as root they run as
// the postgres user (runuser), on data directories that user owns.
type pgTools struct {
	bin  string // holds initdb, pg_ctl, postgres
	psql string
	uid  int // owner of the data directories; -1: this user
	gid  int
}

func findPgTools(bin string) (pgTools, error) {
	t := pgTools{bin: bin, uid: -1, gid: -1}
	if t.bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		best := -1
		for _, d := range dirs {
			v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
			if err == nil && v > best && exists(filepath.Join(d, "initdb")) {
				best, t.bin = v, d
			}
		}
	}
	if t.bin == "" {
		return t, errors.New("find initdb: none under /usr/lib/postgresql/*/bin; pass --pg-bin DIR (the directory holding initdb, pg_ctl and postgres)")
	}
	for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
		if !exists(filepath.Join(t.bin, p)) {
			return t, fmt.Errorf("find %s in %s: not there; pass --pg-bin DIR", p, t.bin)
		}
	}
	t.psql = lookPath("psql", filepath.Join(t.bin, "psql"))
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return t, fmt.Errorf("look up the postgres user to run initdb as (it refuses root): %w", err)
		}
		t.uid, _ = strconv.Atoi(u.Uid)
		t.gid, _ = strconv.Atoi(u.Gid)
	}
	return t, nil
}

// server is the command line for one of the server programs.
func (t pgTools) server(prog string, args ...string) command {
	path := filepath.Join(t.bin, prog)
	if t.uid >= 0 {
		return command{name: "runuser", args: append([]string{"-u", "postgres", "--", path}, args...)}
	}
	return command{name: path, args: args}
}

// own hands path to the user the servers run as.
func (t pgTools) own(path string) error {
	if t.uid < 0 {
		return nil
	}
	return os.Chown(path, t.uid, t.gid)
}

// version is what `postgres --version` says.
func (t pgTools) version(ctx context.Context) string {
	out, err := run(ctx, command{name: filepath.Join(t.bin, "postgres"), args: []string{"--version"}})
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(out)
}

// privateArm is arm A: every world is a PostgreSQL server of its own.
type privateArm struct {
	pg      pgTools
	dir     string
	sql     sqlFiles
	rows    int
	undo    *undo
	servers []*privateServer
}

type privateServer struct {
	dir, data string
	port, pid int
}

func newPrivateArm(pg pgTools, dir string, sql sqlFiles, rows int, u *undo) (*privateArm, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := pg.own(dir); err != nil {
		return nil, fmt.Errorf("hand %s to the postgres user: %w", dir, err)
	}
	return &privateArm{pg: pg, dir: dir, sql: sql, rows: rows, undo: u}, nil
}

// addWorld makes world i: initdb, start, migrate, seed. The time covers all four.
func (a *privateArm) addWorld(ctx context.Context, i int) (time.Duration, error) {
	s := &privateServer{dir: filepath.Join(a.dir, fmt.Sprintf("w%d", i))}
	s.data = filepath.Join(s.dir, "data")
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		return 0, err
	}
	a.undo.push("remove "+s.dir, func(context.Context) error { return os.RemoveAll(s.dir) })
	if err := a.pg.own(s.dir); err != nil {
		return 0, fmt.Errorf("hand %s to the postgres user: %w", s.dir, err)
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	s.port = port
	a.undo.push("stop the server in "+s.data, func(ctx context.Context) error { return a.stop(ctx, s) })

	start := time.Now()
	if _, err := run(ctx, a.pg.server("initdb", "-D", s.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale")); err != nil {
		return 0, fmt.Errorf("world %d: initdb: %w", i, err)
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k '%s'", port, s.dir)
	if _, err := run(ctx, a.pg.server("pg_ctl", "-D", s.data, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "300", "-o", opts, "start")); err != nil {
		return 0, fmt.Errorf("world %d: start the server: %w", i, err)
	}
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", port)
	for _, f := range []string{a.sql.migrate, a.sql.seed} {
		if _, err := run(ctx, a.psql(url, "-f", f)); err != nil {
			return 0, fmt.Errorf("world %d: %s: %w", i, filepath.Base(f), err)
		}
	}
	took := time.Since(start)

	if s.pid, err = findPostmaster(s.data); err != nil {
		return 0, err
	}
	a.servers = append(a.servers, s)
	return took, nil
}

func (a *privateArm) psql(url string, args ...string) command {
	return command{name: a.pg.psql, args: append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url}, args...)}
}

// stop ends a server at once; its data is thrown away next.
func (a *privateArm) stop(ctx context.Context, s *privateServer) error {
	if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, err := run(ctx, a.pg.server("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "-t", "60", "stop"))
	return err
}

// memory is that of every process of every server.
func (a *privateArm) memory(context.Context) (usage, error) {
	var roots []int
	for _, s := range a.servers {
		roots = append(roots, s.pid)
	}
	return measureTree(roots)
}

// verify checks that every world holds the seeded rows.
func (a *privateArm) verify(ctx context.Context) error {
	for i, s := range a.servers {
		url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", s.port)
		if err := checkRows(ctx, a.pg.psql, url, a.rows); err != nil {
			return fmt.Errorf("arm A world %d: %w", i+1, err)
		}
	}
	return nil
}

// checkRows asks the database at url how many seeded rows it holds.
func checkRows(ctx context.Context, psql, url string, want int) error {
	out, err := run(ctx, command{name: psql, args: []string{"-X", "-A", "-t", "-d", url, "-c", "SELECT count(*) FROM items"}})
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(out); got != strconv.Itoa(want) {
		return fmt.Errorf("count the seeded rows in %s: got %s; want %d", url, got, want)
	}
	return nil
}

// freePort is a loopback TCP port nothing listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
