package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// binkyToml is the benchmark repository's config. %s: project, adapter,
// the admin_url line, golden_keep.
const binkyToml = `# Written by benchmarks/golden.
[project]
name        = "%s"
golden_keep = %d

[services.db]
adapter    = "%s"
%s
migrate    = "sh ./migrate.sh '${self.url}'"
seed       = "sh ./seed.sh '${self.url}' %d"
clone_from = "golden"
inputs     = ["db/**"]
`

// migrateScript applies every db/migrations/*.sql in order.
const migrateScript = `#!/bin/sh
set -e
for f in $(find db/migrations -name '*.sql' | sort); do
  case "$1" in
    sqlite://*) sqlite3 "${1#sqlite://}" < "$f" ;;
    *) psql -qX -v ON_ERROR_STOP=1 "$1" -f "$f" ;;
  esac
done
`

// seedScript inserts $2 rows into items.
const seedScript = `#!/bin/sh
set -e
case "$1" in
  sqlite://*) sqlite3 "${1#sqlite://}" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < $2) INSERT INTO items (id, note) SELECT i, hex(randomblob(64)) FROM n;" ;;
  *) psql -qX -v ON_ERROR_STOP=1 "$1" -c "INSERT INTO items (id, note) SELECT i, md5(i::text) || md5((i+1)::text) FROM generate_series(1, $2) i" ;;
esac
`

type options struct {
	adapter, admin, bin string
	switches, rows      int
	json                bool
}

// arm is one way of running the alternation.
type arm struct {
	Name        string          `json:"name"`
	Keep        int             `json:"golden_keep"`
	Ups         []time.Duration `json:"ups_ns"`
	Mean        time.Duration   `json:"mean_ns"`
	Median      time.Duration   `json:"median_ns"`
	GoldenBuilt int             `json:"golden_built"`
}

func main() {
	var o options
	flag.StringVar(&o.adapter, "adapter", "sqlite", "sqlite or postgres")
	flag.StringVar(&o.admin, "admin-url", "postgres://postgres@127.0.0.1:5432/postgres", "the PostgreSQL server (postgres only)")
	flag.StringVar(&o.bin, "bin", "", "a directory holding binky and binky-adapter-<adapter> (default: build them)")
	flag.IntVar(&o.switches, "switches", 10, "how many ups, alternating between the two branches")
	flag.IntVar(&o.rows, "rows", 50000, "rows the seed inserts into every template")
	flag.BoolVar(&o.json, "json", false, "print JSON")
	flag.Parse()
	ctx := context.Background()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/golden:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.adapter != "sqlite" && o.adapter != "postgres" {
		return fmt.Errorf("--adapter %q: use sqlite or postgres", o.adapter)
	}
	tool := map[string]string{"sqlite": "sqlite3", "postgres": "psql"}[o.adapter]
	if _, err := exec.LookPath(tool); err != nil {
		return fmt.Errorf("%s is not on PATH; install it", tool)
	}
	work, err := os.MkdirTemp("", "binky-bench-golden-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.bin != "" {
		if o.bin, err = filepath.Abs(o.bin); err != nil {
			return err
		}
	} else {
		o.bin = filepath.Join(work, "bin")
		for _, pkg := range []string{"github.com/binkyhq/binky/cmd/binky", "github.com/binkyhq/binky/cmd/binkyd", "github.com/binkyhq/binky/plugins/" + o.adapter + "/cmd/binky-adapter-" + o.adapter} {
			if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(o.bin, filepath.Base(pkg)), pkg).CombinedOutput(); err != nil {
				return fmt.Errorf("build %s: %v\n%s", pkg, err, out)
			}
		}
	}
	var arms []arm
	for _, a := range []arm{{Name: "before (one template per clone_from)", Keep: 1}, {Name: "after (a template per inputs key)", Keep: 3}} {
		res, err := runArm(ctx, o, filepath.Join(work, fmt.Sprint("arm", a.Keep)), a)
		if err != nil {
			return fmt.Errorf("arm %s: %w", a.Name, err)
		}
		arms = append(arms, res)
	}
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"adapter": o.adapter, "rows": o.rows, "switches": o.switches, "arms": arms})
	}
	fmt.Printf("%d ups alternating between two branches with different migrations (%s, %d seeded rows)\n\n", o.switches, o.adapter, o.rows)
	fmt.Printf("%-40s %12s %12s %14s\n", "arm", "mean/up", "median/up", "golden_built")
	for _, a := range arms {
		fmt.Printf("%-40s %11.2fs %11.2fs %14d\n", a.Name, a.Mean.Seconds(), a.Median.Seconds(), a.GoldenBuilt)
	}
	if len(arms) == 2 && arms[1].Mean > 0 {
		fmt.Printf("\nafter/before mean: %.2fx faster\n", arms[0].Mean.Seconds()/arms[1].Mean.Seconds())
	}
	return nil
}

// runArm makes a repository with branches a and b, then ups a fresh world
// on a, b, a, b… and times each up. Each world is removed (untimed) before
// the next, as an agent's throwaway world would be.
func runArm(ctx context.Context, o options, dir string, a arm) (arm, error) {
	home, repo := filepath.Join(dir, "home"), filepath.Join(dir, "repo")
	project := fmt.Sprintf("bgold%d%d", os.Getpid()%10000, a.Keep)
	env := append(os.Environ(), "BINKY_HOME="+home, "BINKY_PROXY_ADDR=127.0.0.1:0", "BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"PATH="+o.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PG_ADMIN_URL="+o.admin,
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
	sh := func(name string, args ...string) (string, error) {
		if name == "binky" {
			name = filepath.Join(o.bin, "binky")
		}
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = repo, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return out.String(), nil
	}
	write := func(rel, content string) error {
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	admin := ""
	if o.adapter == "postgres" {
		admin = `admin_url  = "${env.PG_ADMIN_URL}"`
	}
	files := map[string]string{
		"binky.toml":                  fmt.Sprintf(binkyToml, project, a.Keep, o.adapter, admin, o.rows),
		"migrate.sh":                  migrateScript,
		"seed.sh":                     seedScript,
		"db/migrations/001_items.sql": "CREATE TABLE items (id integer PRIMARY KEY, note text);\nCREATE INDEX items_note ON items (note);\n",
	}
	for rel, c := range files {
		if err := write(rel, c); err != nil {
			return a, err
		}
	}
	steps := [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "a"}, {"branch", "a"}, {"checkout", "-qb", "b"}}
	for _, s := range steps {
		if _, err := sh("git", s...); err != nil {
			return a, err
		}
	}
	if err := write("db/migrations/002_orders.sql", "CREATE TABLE orders (id integer PRIMARY KEY, item integer REFERENCES items (id));\n"); err != nil {
		return a, err
	}
	for _, s := range [][]string{{"add", "-A"}, {"commit", "-qm", "b"}, {"checkout", "-q", "main"}} {
		if _, err := sh("git", s...); err != nil {
			return a, err
		}
	}
	defer func() {
		sh("binky", "golden", "drop", "--project", project)
		sh("binky", "daemon", "stop")
	}()
	for i := range o.switches {
		base := []string{"a", "b"}[i%2]
		br := fmt.Sprintf("sw%d", i)
		if _, err := sh("git", "branch", br, base); err != nil {
			return a, err
		}
		start := time.Now()
		if _, err := sh("binky", "up", "-q", br); err != nil {
			return a, err
		}
		a.Ups = append(a.Ups, time.Since(start))
		if _, err := sh("binky", "remove", "-q", "--force", br); err != nil {
			return a, err
		}
	}
	events, _ := os.ReadFile(filepath.Join(home, "events.log"))
	a.GoldenBuilt = strings.Count(string(events), `"event":"golden_built"`)
	var sum time.Duration
	for _, d := range a.Ups {
		sum += d
	}
	a.Mean = sum / time.Duration(len(a.Ups))
	sorted := slices.Clone(a.Ups)
	slices.Sort(sorted)
	a.Median = sorted[len(sorted)/2]
	return a, nil
}
