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

// binkyToml is a benchmark repository's config; %s is the [worktree]
// table (empty for the arm that copies nothing).
const binkyToml = `# Written by benchmarks/warm.
[project]
name = "warmbench"

[services.web]
cmd = "exec sleep 600"
health = { exec = "true" }
%s`

type options struct {
	sizeMB, files, runs int
	reflinkDir, byteDir string
	bin                 string
	json                bool
}

// arm is one way of making the new worktree.
type arm struct {
	Name   string          `json:"name"`
	Dir    string          `json:"dir"`
	Ups    []time.Duration `json:"ups_ns"`
	Median time.Duration   `json:"median_ns"`
	Note   string          `json:"note,omitempty"`
}

func main() {
	var o options
	def := os.Getenv("BINKY_TEST_REFLINK_DIR")
	if def == "" {
		def = "/tmp/binky-testenv/reflink"
	}
	flag.IntVar(&o.sizeMB, "size", 200, "MB of ignored cache in the main worktree")
	flag.IntVar(&o.files, "files", 2000, "how many files the cache is split into")
	flag.IntVar(&o.runs, "runs", 3, "fresh worktrees made per arm")
	flag.StringVar(&o.reflinkDir, "reflink-dir", def, "a directory on a filesystem that clones (XFS with reflink, btrfs)")
	flag.StringVar(&o.byteDir, "byte-dir", os.TempDir(), "a directory on a filesystem that does not clone")
	flag.StringVar(&o.bin, "bin", "", "a directory holding binky (default: build it)")
	flag.BoolVar(&o.json, "json", false, "print JSON")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/warm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.bin == "" {
		dir, err := os.MkdirTemp("", "warmbench-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		build := exec.CommandContext(ctx, "go", "build", "-o", dir, "./cmd/binky", "./cmd/binkyd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build binky (run from the repository's top): %w", err)
		}
		o.bin = dir
	}
	const copyTable = "\n[worktree]\ncopy = [\"cache\"]\n"
	arms := []struct {
		name, dir, table string
	}{
		{"none", o.byteDir, ""},
		{"byte copy", o.byteDir, copyTable},
		{"reflink", o.reflinkDir, copyTable},
	}
	var out []arm
	for _, a := range arms {
		r, err := runArm(ctx, o, a.name, a.dir, a.table)
		if err != nil {
			return fmt.Errorf("arm %s: %w", a.name, err)
		}
		out = append(out, r)
	}
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Printf("binky up of a fresh worktree, %d MB ignored cache in %d files, %d runs per arm\n", o.sizeMB, o.files, o.runs)
	fmt.Printf("%-10s %-12s %s\n", "arm", "median", "ups")
	for _, a := range out {
		var ups []string
		for _, u := range a.Ups {
			ups = append(ups, u.Round(time.Millisecond).String())
		}
		fmt.Printf("%-10s %-12s %s  %s\n", a.Name, a.Median.Round(time.Millisecond), strings.Join(ups, " "), a.Note)
	}
	return nil
}

// runArm makes a repository under dir with the cache, then times o.runs
// ups of fresh branches, removing each world after.
func runArm(ctx context.Context, o options, name, dir, table string) (arm, error) {
	a := arm{Name: name, Dir: dir}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return a, fmt.Errorf("%s is not a directory (for reflink: run scripts/testenv up as root, or pass --reflink-dir)", dir)
	}
	base, err := os.MkdirTemp(dir, "warmbench-")
	if err != nil {
		return a, err
	}
	defer os.RemoveAll(base)
	// BINKY_HOME stays off the (small) filesystem under test: admission
	// measures free disk there.
	home, err := os.MkdirTemp("", "warmbench-home-")
	if err != nil {
		return a, err
	}
	defer os.RemoveAll(home)
	repo := filepath.Join(base, "repo")
	env := append(os.Environ(), "BINKY_HOME="+home, "BINKY_PROXY_ADDR=127.0.0.1:0", "BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"PATH="+o.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
	sh := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = repo, env
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		if err != nil {
			return b.String(), fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, b.String())
		}
		return b.String(), nil
	}
	defer sh(filepath.Join(o.bin, "binky"), "daemon", "stop")
	os.MkdirAll(repo, 0o755)
	os.WriteFile(filepath.Join(repo, "binky.toml"), []byte(fmt.Sprintf(binkyToml, table)), 0o644)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("cache/\n"), 0o644)
	for _, c := range [][]string{{"git", "init", "-q", "-b", "main"}, {"git", "add", "-A"}, {"git", "commit", "-qm", "bench"}} {
		if _, err := sh(c...); err != nil {
			return a, err
		}
	}
	if err := writeCache(filepath.Join(repo, "cache"), o.sizeMB, o.files); err != nil {
		return a, err
	}
	exec.Command("sync").Run()
	binky := filepath.Join(o.bin, "binky")
	if _, err := sh(binky, "status"); err != nil { // start the daemon outside the timing
		return a, err
	}
	for i := range o.runs {
		branch := fmt.Sprintf("bench/%s-%d", strings.ReplaceAll(name, " ", "-"), i)
		start := time.Now()
		if out, err := sh(binky, "up", "--no-wait", branch); err != nil {
			return a, fmt.Errorf("%w\n%s", err, out)
		}
		a.Ups = append(a.Ups, time.Since(start))
		if table != "" {
			if st, err := os.Stat(filepath.Join(base, "repo.worktrees")); err == nil && st.IsDir() {
				if n := countFiles(filepath.Join(base, "repo.worktrees")); n < o.files {
					return a, fmt.Errorf("the new worktree holds %d cache files; want %d", n, o.files)
				}
			}
		}
		if _, err := sh(binky, "remove", "--force", "-q", branch); err != nil {
			return a, err
		}
	}
	sorted := slices.Clone(a.Ups)
	slices.Sort(sorted)
	a.Median = sorted[len(sorted)/2]
	return a, nil
}

// writeCache fills dir with sizeMB of random-looking bytes in files files.
func writeCache(dir string, sizeMB, files int) error {
	per := int64(sizeMB) << 20 / int64(files)
	buf := make([]byte, per)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.bin", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		for j := range buf {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			buf[j] = byte(x)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			return fmt.Errorf("write the cache: %w", err)
		}
	}
	return nil
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, de os.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".bin") {
			n++
		}
		return nil
	})
	return n
}
