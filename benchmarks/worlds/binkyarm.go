package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/binkyhq/binky/sdk/names"
)

// binkyToml is the repository's config: one PostgreSQL slice per world,
// cloned from a golden template that migrate and seed build once.
const binkyToml = `# Written by benchmarks/worlds.
[project]
name = "%s"

[services.db]
adapter    = "postgres"
admin_url  = "${env.PG_ADMIN_URL}"
migrate    = "psql '${self.url}' -X -q -v ON_ERROR_STOP=1 -f migrate.sql"
seed       = "psql '${self.url}' -X -q -v ON_ERROR_STOP=1 -f seed.sql"
clone_from = "golden"
`

// binkyArm is arm B: one shared server, a golden template, a clone per world.
type binkyArm struct {
	binky   string // the binky executable
	psql    string
	admin   string
	project string
	home    string
	repo    string
	env     []string
	rows    int
	undo    *undo

	postmaster int
	resident   map[int]bool // the postmaster's children before the first world
	addrs      []string
}

func newBinkyArm(ctx context.Context, binDir, psql, admin, dir string, rows int, u *undo) (*binkyArm, error) {
	var rnd [4]byte
	rand.Read(rnd[:])
	b := &binkyArm{
		binky:   filepath.Join(binDir, "binky"),
		psql:    psql,
		admin:   admin,
		project: "wb" + hex.EncodeToString(rnd[:]),
		home:    filepath.Join(dir, "home"),
		repo:    filepath.Join(dir, "repo"),
		rows:    rows,
		undo:    u,
	}
	b.env = binkyEnv(b.home, binDir, admin)

	// Taken down last-made-first: worlds, then databases, then the daemon.
	u.push("stop the binky daemon", b.stopDaemon)
	u.push("drop the golden database", b.dropDatabases)
	u.push("remove the worlds", b.removeWorlds)

	if err := os.MkdirAll(b.repo, 0o755); err != nil {
		return nil, err
	}
	if _, err := writeSQL(b.repo, rows); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(b.repo, "binky.toml"), fmt.Appendf(nil, binkyToml, b.project), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "worlds benchmark"}} {
		if _, err := run(ctx, command{name: "git", args: args, dir: b.repo, env: b.env}); err != nil {
			return nil, fmt.Errorf("make the benchmark repository: %w", err)
		}
	}
	dataDir, err := b.adminQuery(ctx, "SHOW data_directory")
	if err != nil {
		return nil, fmt.Errorf("ask the shared server for its data directory: %w", err)
	}
	if b.postmaster, err = findPostmaster(dataDir); err != nil {
		return nil, err
	}
	kids, err := childrenOf(b.postmaster)
	if err != nil {
		return nil, err
	}
	b.resident = map[int]bool{}
	for _, pid := range kids {
		b.resident[pid] = true
	}
	return b, nil
}

// binkyEnv is this program's environment with Binky's pointed at home.
func binkyEnv(home, binDir, admin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BINKY_") || strings.HasPrefix(k, "GIT_") || k == "PATH" || k == "PG_ADMIN_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"BINKY_HOME="+home,
		"BINKY_PROXY_ADDR=127.0.0.1:0",
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PG_ADMIN_URL="+admin,
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=binky", "GIT_AUTHOR_EMAIL=binky@example.invalid",
		"GIT_COMMITTER_NAME=binky", "GIT_COMMITTER_EMAIL=binky@example.invalid",
	)
}

func (b *binkyArm) cli(args ...string) command {
	return command{name: b.binky, args: args, dir: b.repo, env: b.env}
}

func (b *binkyArm) adminQuery(ctx context.Context, sql string) (string, error) {
	out, err := run(ctx, command{name: b.psql, args: []string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", b.admin, "-c", sql}})
	return strings.TrimSpace(out), err
}

func (b *binkyArm) serverVersion(ctx context.Context) string {
	v, err := b.adminQuery(ctx, "SHOW server_version")
	if err != nil {
		return "unknown"
	}
	return "PostgreSQL " + v
}

// addWorld is `binky up bench/w<i>`; the first one also starts the daemon
// and builds the golden template.
func (b *binkyArm) addWorld(ctx context.Context, i int) (time.Duration, error) {
	branch := fmt.Sprintf("bench/w%d", i)
	start := time.Now()
	out, err := run(ctx, b.cli("up", "-q", "--json", branch))
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("world %d: %w", i, err)
	}
	var w struct {
		State    string `json:"state"`
		Services []struct {
			Name, Address string
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		return 0, fmt.Errorf("world %d: read `binky up --json`: %w\n%s", i, err, out)
	}
	if w.State != "up" || len(w.Services) != 1 || w.Services[0].Address == "" {
		return 0, fmt.Errorf("world %d: binky up answered state %q with services %+v; want one db slice up", i, w.State, w.Services)
	}
	b.addrs = append(b.addrs, w.Services[0].Address)
	return took, nil
}

// daemonPid asks the daemon for its pid; 0 when none runs.
func (b *binkyArm) daemonPid(ctx context.Context) int {
	out, err := run(ctx, b.cli("daemon", "status", "--json"))
	if err != nil {
		return 0
	}
	var st struct {
		Running bool `json:"running"`
		Pid     int  `json:"pid"`
	}
	if json.Unmarshal([]byte(out), &st) != nil || !st.Running {
		return 0
	}
	return st.Pid
}

// memory is that of the shared server (its postmaster and every process
// under it) plus the binky daemon and anything it keeps running.
//
// Other programs use the shared server too (on a developer's machine, and
// here other test suites): their backends come and go. So the reading waits,
// up to quietWait, for a moment when the postmaster has no child it did not
// have before the first world and the daemon has no helper process still
// exiting, and says how many visitors it counted if that moment never came.
func (b *binkyArm) memory(ctx context.Context) (usage, error) {
	deadline := time.Now().Add(quietWait)
	for {
		daemon := b.daemonPid(ctx)
		visitors, err := b.newChildren()
		if err != nil {
			return usage{}, err
		}
		helpers := 0
		if daemon > 0 {
			kids, err := childrenOf(daemon)
			if err != nil {
				return usage{}, err
			}
			helpers = len(kids)
		}
		if visitors+helpers == 0 || time.Now().After(deadline) {
			roots := []int{b.postmaster}
			if daemon > 0 {
				roots = append(roots, daemon)
			}
			u, err := measureTree(roots)
			u.others = visitors
			return u, err
		}
		select {
		case <-ctx.Done():
			return usage{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// quietWait bounds the wait for the shared server to have no visitors.
const quietWait = 30 * time.Second

// newChildren counts the postmaster's children that were not there before
// the first world: backends of clients, autovacuum workers.
func (b *binkyArm) newChildren() (int, error) {
	kids, err := childrenOf(b.postmaster)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range kids {
		if !b.resident[pid] {
			n++
		}
	}
	return n, nil
}

// verify checks that every world holds the seeded rows.
func (b *binkyArm) verify(ctx context.Context) error {
	for i, addr := range b.addrs {
		if err := checkRows(ctx, b.psql, addr, b.rows); err != nil {
			return fmt.Errorf("arm B world %d: %w", i+1, err)
		}
	}
	return nil
}

// cloneMethods counts the slice_cloned events by method, and clone_fallback
// events, from the daemon's event log.
func (b *binkyArm) cloneMethods() string {
	f, err := os.Open(filepath.Join(b.home, "events.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Event, Method string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Event {
		case "slice_cloned":
			counts["cloned ("+ev.Method+")"]++
		case "clone_fallback":
			counts["clone_fallback"]++
		case "golden_built":
			counts["golden_built"]++
		}
	}
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (b *binkyArm) daemonMayRun() bool {
	return exists(filepath.Join(b.home, "daemon.sock")) || exists(filepath.Join(b.home, "daemon.pid"))
}

// removeWorlds removes every world of the benchmark's project.
func (b *binkyArm) removeWorlds(ctx context.Context) error {
	if !b.daemonMayRun() {
		return nil
	}
	out, err := run(ctx, b.cli("status", "--json"))
	if err != nil {
		return err
	}
	var st struct {
		Worlds []struct{ Project, Worktree string } `json:"worlds"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return fmt.Errorf("read `binky status --json`: %w", err)
	}
	var errs []string
	for _, w := range st.Worlds {
		if w.Project != b.project {
			continue
		}
		if _, err := run(ctx, b.cli("remove", "--force", "-q", w.Worktree)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// dropDatabases drops the golden template — binky has no command for it —
// named by the marker files under golden/postgres/ and by the naming rule
// (a build cut short leaves the database without a marker), and any world's
// database a failed remove left behind: all are <project>_….
func (b *binkyArm) dropDatabases(ctx context.Context) error {
	drop := map[string]bool{names.Postgres(names.Golden(b.project, "golden")): true}
	markers, _ := os.ReadDir(filepath.Join(b.home, "golden", "postgres"))
	for _, m := range markers {
		if !m.IsDir() && !strings.HasSuffix(m.Name(), ".tmp") {
			drop[names.Postgres(m.Name())] = true
		}
	}
	all, err := b.adminQuery(ctx, "SELECT datname FROM pg_database")
	if err != nil {
		return err
	}
	for _, db := range strings.Fields(all) {
		if strings.HasPrefix(db, b.project+"_") {
			drop[db] = true
		}
	}
	var errs []string
	for db := range drop {
		if _, err := b.adminQuery(ctx, `DROP DATABASE IF EXISTS "`+strings.ReplaceAll(db, `"`, `""`)+`" WITH (FORCE)`); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

func (b *binkyArm) stopDaemon(ctx context.Context) error {
	if !b.daemonMayRun() {
		return nil
	}
	_, err := run(ctx, b.cli("daemon", "stop"))
	return err
}
